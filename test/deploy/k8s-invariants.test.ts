import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config/index.js';
import {
  containersOf,
  devSecrets,
  envOf,
  findDoc,
  type K8sDoc,
  loadK8sDocs,
  POD_IP,
  podTemplate,
  repoRoot,
  resolveEnv,
} from './manifest-support.js';

/**
 * What the Kubernetes base promises operators and the runbook: the agent sends every
 * call to the workbench replicas through the headless Service, each replica is
 * named after its pod, workspaces live on an emptyDir, credentials come from Secrets,
 * and only agents reach the mesh port.
 */

const docs = loadK8sDocs();
const base = docs.filter((d) => d.file.startsWith('deploy/k8s/base/'));
const agent = findDoc(base, 'Deployment', 'agent');
const workbench = findDoc(base, 'Deployment', 'workbench');
const agentPod = podTemplate(agent)!;
const workbenchPod = podTemplate(workbench)!;
const [agentContainer] = containersOf(agent);
const [workbenchContainer] = containersOf(workbench);
const AGENT_LABELS = { 'app.kubernetes.io/name': 'agent', 'app.kubernetes.io/part-of': 'memql' };
const WORKBENCH_LABELS = { ...AGENT_LABELS, 'app.kubernetes.io/name': 'workbench' };

/** The plain value of an env variable, or undefined when it is unset or a reference. */
function envValue(doc: K8sDoc, name: string): string | undefined {
  return envOf(containersOf(doc)[0]!).get(name)?.value;
}

t.test('agent: remote mode, the headless Service as its seed, HTTP probes', async (t) => {
  t.equal(containersOf(agent).length, 1);
  t.equal(envValue(agent, 'MEMQL_WORKBENCH_REMOTE'), '1');
  t.equal(envValue(agent, 'MEMQL_WORKER_PEERS'), 'workbench=workbench:50060');
  t.equal(envValue(agent, 'MEMQL_HTTP_LISTEN'), '0.0.0.0:8080');
  t.match(agentContainer!.livenessProbe, { httpGet: { path: '/healthz', port: 'http' } });
  t.match(agentContainer!.readinessProbe, {
    httpGet: { path: '/readyz', port: 'http' },
    timeoutSeconds: 3,
  });
  t.match(agentContainer!.ports, [{ name: 'http', containerPort: 8080 }, { name: 'grpc' }]);
  t.match(agentPod.spec?.securityContext, { runAsNonRoot: true });
  t.match(agentContainer!.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  });
  t.same(agentContainer!.securityContext?.capabilities?.add, undefined, 'no capability added');
  const service = findDoc(base, 'Service', 'agent');
  t.match(service.spec, { selector: AGENT_LABELS, ports: [{ port: 8080 }, { port: 50060 }] });
});

t.test('workbench: a Deployment named workbench with 2 replicas', async (t) => {
  t.match(workbench.spec, { replicas: 2, selector: { matchLabels: WORKBENCH_LABELS } });
  t.match(workbenchPod.metadata?.labels, WORKBENCH_LABELS);
  t.equal(envValue(workbench, 'MEMQL_GRPC_LISTEN'), '0.0.0.0:50060');
  t.match(workbenchContainer!.ports, [{ containerPort: 50060 }]);
  t.match(workbenchContainer!.livenessProbe, { grpc: { port: 50060 } });
  t.match(workbenchContainer!.readinessProbe, { grpc: { port: 50060 } });
  // The node's default drain: 25 s of grace plus about 7 s of settling.
  t.ok((workbenchPod.spec?.terminationGracePeriodSeconds ?? 30) > 32, 'room for the drain');
  t.match(workbenchContainer!.securityContext, {
    privileged: false,
    capabilities: { drop: ['ALL'] },
  });
  t.equal(
    workbenchPod.spec?.hostUsers,
    false,
    'a user namespace per pod (and procMount: Unmasked requires it)',
  );
});

t.test('headless Service workbench on 50060 selecting the workbench pods', async (t) => {
  const service = findDoc(base, 'Service', 'workbench');
  t.match(service.spec, {
    clusterIP: 'None',
    selector: WORKBENCH_LABELS,
    ports: [{ port: 50060 }],
  });
  const pdb = findDoc(base, 'PodDisruptionBudget', 'workbench');
  t.match(pdb.spec, { minAvailable: 1, selector: { matchLabels: WORKBENCH_LABELS } });
});

t.test('node ids are pod names and workspaces live on an emptyDir', async (t) => {
  for (const doc of [agent, workbench]) {
    t.same(envOf(containersOf(doc)[0]!).get('MEMQL_NODE_ID')?.valueFrom, {
      fieldRef: { fieldPath: 'metadata.name' },
    });
  }
  const root = '/var/lib/memql/workbenches';
  t.equal(envValue(workbench, 'MEMQL_WORKBENCH_ROOT'), root);
  const mount = workbenchContainer!.volumeMounts?.find((m) => m.mountPath === root);
  t.ok(mount, 'the root is a mount');
  const volume = workbenchPod.spec?.volumes?.find((v) => v.name === mount?.name);
  t.ok(volume?.emptyDir, 'from an emptyDir');
});

t.test('credentials come from Secrets the dev overlay generates', async (t) => {
  const fromSecrets = new Set<string>([
    ...CONFIG_VARIABLES.filter((v) => 'secret' in v && v.secret)
      .map((v) => v.name)
      // The worker host runs on a user's own machine, never in the cluster.
      .filter((name) => !name.startsWith('MEMQL_WORKER_')),
    'MEMQL_DATABASE_URL',
    'MEMQL_S3_ACCESS_KEY_ID',
    'MEMQL_MESH_TOKEN',
  ]);
  const dev = devSecrets();
  for (const doc of [agent, workbench]) {
    const env = envOf(containersOf(doc)[0]!);
    for (const name of fromSecrets) {
      const ref = env.get(name)?.valueFrom?.secretKeyRef;
      t.ok(ref && !ref.optional, `${doc.metadata?.name}: ${name} from a required secretKeyRef`);
      t.ok(dev.get(ref?.name ?? '')?.has(ref?.key ?? ''), `the dev overlay generates ${name}`);
    }
  }
});

t.test(
  "docs/deploy.md's kubectl create secret commands make every key the base needs",
  async (t) => {
    const readme = readFileSync(join(repoRoot, 'docs', 'deploy.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Deploy on Kubernetes\n'));
    for (const doc of [agent, workbench]) {
      for (const e of containersOf(doc)[0]!.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref || ref.optional) continue;
        // The command: from `kubectl create secret generic <name>` to its last `\` line.
        const match = new RegExp(`kubectl create secret generic ${ref.name} (?:.*\\\\\n)*.*`).exec(
          section,
        );
        t.ok(match, `the README creates Secret ${ref.name}`);
        t.match(match?.[0], `--from-literal=${ref.key}=`, `${ref.name} gets key ${ref.key}`);
      }
    }
  },
);

t.test('each node container loads its configuration', async (t) => {
  for (const doc of [agent, workbench]) {
    const podName = `${doc.metadata?.name}-6d9f7c8b4-x2x9z`;
    const env = resolveEnv(containersOf(doc)[0]!, podName, devSecrets());
    const config = loadConfig(env, { hostname: podName, cwd: '/' });
    t.equal(config.nodeId, podName, `${doc.metadata?.name}: node id is the pod name`);
    t.same(config.unknownVariables, []);
    t.same(config.warnings, []);
    t.not(config.mesh.token, null, 'a mesh token is set');
    t.equal(config.objectStore.kind, 's3');
  }
  const agentConfig = loadConfig(resolveEnv(agentContainer!, 'agent-1', devSecrets()));
  t.match(agentConfig.workerPeers, [{ type: 'workbench', host: 'workbench', port: 50060 }]);
  t.same(
    agentConfig.listen.grpcAdvertise,
    { host: POD_IP, port: 50060 },
    'the agent advertises its own pod IP to its peers, on the port it listens on',
  );
  t.same(agentConfig.listen.grpc, { host: '0.0.0.0', port: 50060 });
  t.not(agentConfig.mesh.token, null, 'the forward between agent replicas needs the mesh token');
});

t.test('agent replicas reach each other and worker hosts reach them on 50060', async (t) => {
  t.match(agentContainer!.ports, [{ name: 'http' }, { name: 'grpc', containerPort: 50060 }]);
  const service = findDoc(base, 'Service', 'agent');
  t.match((service.spec as { ports: unknown[] }).ports, [
    { name: 'http', port: 8080 },
    { name: 'grpc', port: 50060 },
  ]);
  const policy = findDoc(base, 'NetworkPolicy', 'agent');
  const spec = policy.spec as {
    podSelector: { matchLabels: Record<string, string> };
    ingress: { from?: Record<string, unknown>[]; ports?: { port: number }[] }[];
  };
  t.same(spec.podSelector.matchLabels, AGENT_LABELS);
  const fromAgents = spec.ingress.filter((r) =>
    r.from?.some(
      (f) => JSON.stringify(f) === JSON.stringify({ podSelector: { matchLabels: AGENT_LABELS } }),
    ),
  );
  t.ok(
    fromAgents.some((r) => r.ports?.some((p) => p.port === 50060)),
    'agent pods reach each other on 50060',
  );
});

t.test('every container has resource requests and limits', async (t) => {
  for (const { file, doc } of docs) {
    for (const c of containersOf(doc)) {
      for (const kind of ['requests', 'limits'] as const) {
        t.ok(c.resources?.[kind]?.cpu, `${file} ${c.name}: ${kind}.cpu`);
        t.ok(c.resources?.[kind]?.memory, `${file} ${c.name}: ${kind}.memory`);
      }
    }
  }
});

t.test('only agent pods reach the workbench mesh port', async (t) => {
  const policy = findDoc(base, 'NetworkPolicy', 'workbench');
  const spec = policy.spec as {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: { from?: Record<string, unknown>[]; ports?: { port: number }[] }[];
  };
  t.same(spec.podSelector.matchLabels, WORKBENCH_LABELS);
  t.ok(spec.policyTypes.includes('Ingress'));
  for (const rule of spec.ingress) {
    t.ok(rule.ports?.length && rule.from?.length, 'every rule names its ports and sources');
  }
  const mesh = spec.ingress.filter((r) => r.ports?.some((p) => p.port === 50060));
  t.equal(mesh.length, 1, 'one rule opens 50060');
  t.same(mesh[0]?.from, [{ podSelector: { matchLabels: AGENT_LABELS } }]);
});

t.test('both pod templates carry scrape annotations for a served port', async (t) => {
  for (const doc of [agent, workbench]) {
    const pod = podTemplate(doc)!;
    const a = pod.metadata?.annotations ?? {};
    t.equal(a['prometheus.io/scrape'], 'true');
    t.equal(a['prometheus.io/path'], '/metrics');
    const ports = containersOf(doc).flatMap((c) => c.ports ?? []);
    t.ok(
      ports.some((p) => String(p.containerPort) === a['prometheus.io/port']),
      `${doc.metadata?.name}: port ${a['prometheus.io/port']} is a container port`,
    );
  }
  t.equal(envValue(workbench, 'MEMQL_METRICS_LISTEN'), '0.0.0.0:9091');
  t.equal(workbenchPod.metadata?.annotations?.['prometheus.io/port'], '9091');
});

t.test('every object is labelled part of memql', async (t) => {
  for (const { file, doc } of docs) {
    const labels = (doc.metadata as { labels?: Record<string, string> } | undefined)?.labels;
    t.equal(labels?.['app.kubernetes.io/part-of'], 'memql', `${file}: ${doc.metadata?.name}`);
    if (doc.kind !== 'Namespace') t.ok(labels?.['app.kubernetes.io/name'], `${file}: name label`);
  }
});
