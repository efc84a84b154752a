import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import {
  type ComposeService,
  containersOf,
  findDoc,
  loadK8sDocs,
  readCompose,
} from './manifest-support.js';

/**
 * deploy/compose.yaml: the mesh on one machine. Its nodes are built from the
 * Dockerfile's targets, share one mesh token, and the agent dials both replicas.
 */

const compose = readCompose();
const services = compose.services;
const WORKBENCHES = ['workbench-1', 'workbench-2'];

/** A service's environment as strings, the way Compose passes it. */
function envOf(service: ComposeService | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service?.environment ?? {}).map(([k, v]) => [k, String(v)]),
  );
}

t.test('the services: Postgres, an S3 server, one agent, two workbench replicas', async (t) => {
  t.equal(services.postgres?.image, 'postgres:16');
  t.match(services.minio?.image, /^minio\/minio/);
  t.ok(services['minio-bucket'], 'a one-shot creates the bucket');
  t.same(
    Object.keys(services).filter((n) => n.startsWith('workbench')),
    WORKBENCHES,
  );
  for (const [name, target] of [['agent', 'agent'], ...WORKBENCHES.map((w) => [w, 'workbench'])]) {
    t.same(
      services[name!]?.build,
      { context: '..', dockerfile: 'deploy/Dockerfile', target },
      `${name} is built from the ${target} target`,
    );
  }
  t.match(services.agent?.ports, [/:8080:8080$/]);
});

t.test('one mesh token on the agent and both replicas', async (t) => {
  const tokens = ['agent', ...WORKBENCHES].map((n) => envOf(services[n]).MEMQL_MESH_TOKEN);
  t.ok(tokens[0] && tokens[0].length >= 16, 'the agent has a token of 16 characters or more');
  t.same(new Set(tokens).size, 1, 'every node has the same one');
});

t.test('the agent is remote and dials both replicas', async (t) => {
  const env = envOf(services.agent);
  t.equal(env.MEMQL_WORKBENCH_REMOTE, '1');
  const config = loadConfig(env);
  t.same(
    config.workerPeers.map((p) => `${p.type}=${p.host}:${p.port}`),
    WORKBENCHES.map((w) => `workbench=${w}:50060`),
  );
  t.equal(config.nodeId, 'agent');
  t.equal(config.listen.http.host, '0.0.0.0');
});

t.test('each replica has its own node id and root volume', async (t) => {
  const ids = new Set<string>();
  for (const name of WORKBENCHES) {
    const service = services[name];
    const config = loadConfig(envOf(service));
    ids.add(config.nodeId);
    t.equal(config.nodeId, name, `${name}: its node id is its host name`);
    t.equal(config.listen.grpc.port, 50060);
    t.equal(config.objectStore.kind, 's3');
    t.equal(config.database.kind, 'postgres');
    t.same(config.unknownVariables, []);
    t.ok(
      service?.volumes?.some((v) => v.endsWith(`:${config.workbenchRoot}`)),
      `${name}: the workspace root is a volume`,
    );
  }
  t.equal(ids.size, WORKBENCHES.length);
});

t.test('the replicas have the privileges of the Kubernetes workbench, no more', async (t) => {
  const k8s = containersOf(findDoc(loadK8sDocs(), 'Deployment', 'workbench'))[0]!.securityContext;
  const unconfined = (type: string | undefined) => (type === 'Unconfined' ? 'unconfined' : type);
  for (const name of WORKBENCHES) {
    const service = services[name];
    t.same(service?.cap_drop, k8s?.capabilities?.drop, `${name}: cap_drop`);
    t.same(service?.cap_add, k8s?.capabilities?.add, `${name}: cap_add`);
    t.same(
      service?.security_opt,
      [
        `seccomp=${unconfined(k8s?.seccompProfile?.type)}`,
        `apparmor=${unconfined(k8s?.appArmorProfile?.type)}`,
        ...(k8s?.procMount === 'Unmasked' ? ['systempaths=unconfined'] : []),
      ],
      `${name}: seccomp, AppArmor and /proc`,
    );
  }
});
