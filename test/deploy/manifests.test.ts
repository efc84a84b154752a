import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import t from 'tap';
import { CONFIG_VARIABLES } from '../../src/config/index.js';
import {
  containersOf,
  type K8sDoc,
  k8sRoot,
  loadK8sDocs,
  parseYamlDocuments,
  readKustomization,
  readYamlDocuments,
  rel,
  repoRoot,
  validateDoc,
  yamlFiles,
} from './manifest-support.js';

/**
 * The Kubernetes manifests and the compose file, checked offline: each document
 * against the Kubernetes schema of its kind, each kustomization against its folder,
 * and every variable name against the configuration registry.
 */

const version = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;

const KUSTOMIZATION_FIELDS = [
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'images',
  'secretGenerator',
  'patches',
];

t.test('every YAML document under deploy/k8s parses and passes its schema', async (t) => {
  const files = yamlFiles(k8sRoot).filter((f) => !f.endsWith('/kustomization.yaml'));
  t.ok(files.length >= 7, 'the base and the dev overlay hold their files');
  for (const file of files) {
    const docs = readYamlDocuments(file);
    t.ok(docs.length > 0, `${rel(file)} holds a document`);
    for (const doc of docs) {
      t.same(validateDoc(doc), [], `${rel(file)}: ${String(doc.kind)} ${doc.metadata?.name}`);
    }
  }
});

t.test('the validation rejects broken documents, so the check above can fail', async (t) => {
  const deployment = (): K8sDoc => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: { labels: { app: 'x' } },
        spec: { containers: [{ name: 'x', image: 'x:1' }] },
      },
    },
  });
  t.same(validateDoc(deployment()), [], 'the sound document passes');

  const wrongType = deployment() as { spec: { replicas: unknown } };
  wrongType.spec.replicas = 'two';
  t.match(validateDoc(wrongType as K8sDoc), [/spec\/replicas must be integer/]);

  const misspelt = deployment() as { spec: Record<string, unknown> };
  misspelt.spec.replica = 2;
  t.same(validateDoc(misspelt as K8sDoc), ['unknown field /spec/replica']);

  const nested = deployment() as {
    spec: { template: { spec: { containers: Record<string, unknown>[] } } };
  };
  nested.spec.template.spec.containers[0]!.imagePullPolcy = 'Always';
  t.same(validateDoc(nested as K8sDoc), [
    'unknown field /spec/template/spec/containers/0/imagePullPolcy',
  ]);

  t.match(validateDoc({ ...deployment(), kind: 'Deploymnet' }), [/unknown apiVersion\/kind/]);
  t.match(validateDoc({ ...deployment(), apiVersion: 'apps/v1beta1' }), [/unknown apiVersion/]);
  t.throws(() => parseYamlDocuments('a: [1, 2\n', 'broken.yaml'), /broken\.yaml/);
});

t.test('each kustomization lists exactly the YAML files of its folder', async (t) => {
  const dirs = readdirSync(k8sRoot).filter((d) => statSync(join(k8sRoot, d)).isDirectory());
  t.same(dirs.sort(), ['base', 'dev']);
  for (const dir of dirs) {
    const k = readKustomization(dir);
    t.equal(k.apiVersion, 'kustomize.config.k8s.io/v1beta1', `${dir}: apiVersion`);
    t.equal(k.kind, 'Kustomization', `${dir}: kind`);
    t.equal(k.namespace, 'memql', `${dir}: namespace`);
    const unknown = Object.keys(k).filter((key) => !KUSTOMIZATION_FIELDS.includes(key));
    t.same(unknown, [], `${dir}: only fields this test knows`);

    const listed = [...(k.resources ?? []), ...(k.patches ?? []).flatMap((p) => p.path ?? [])];
    for (const path of listed) {
      t.ok(existsSync(resolve(k8sRoot, dir, path)), `${dir}: ${path} exists`);
    }
    const files = readdirSync(join(k8sRoot, dir)).filter(
      (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml',
    );
    const expected = dir === 'dev' ? ['../base', ...files] : files;
    t.same([...listed].sort(), expected.sort(), `${dir}: lists every file, once`);
  }
});

t.test('the dev overlay patches only objects the base defines', async (t) => {
  const docs = loadK8sDocs();
  for (const patch of readKustomization('dev').patches ?? []) {
    const target = patch.target;
    t.ok(
      docs.some((d) => d.doc.kind === target?.kind && d.doc.metadata?.name === target?.name),
      `${target?.kind} ${target?.name} exists`,
    );
  }
});

t.test('the images block names the four images at the package version', async (t) => {
  const images = readKustomization('base').images ?? [];
  t.same(
    images.map((i) => `${i.name}:${i.newTag}`),
    ['agent', 'workbench', 'workbench-runtime', 'runner'].map((n) => `memql/${n}:${version}`),
  );
  for (const { file, doc } of loadK8sDocs()) {
    for (const c of containersOf(doc).filter((c) => c.image?.startsWith('memql/'))) {
      const [name, tag] = (c.image ?? '').split(':');
      t.ok(
        images.some((i) => i.name === name),
        `${file}: ${c.image} is in the images block`,
      );
      t.equal(tag, version, `${file}: ${c.image} carries the package version`);
    }
  }
});

t.test('every MEMQL_ name in the deployment files is a variable the config reads', async (t) => {
  const known = new Set<string>(CONFIG_VARIABLES.map((v) => v.name));
  const files = [...yamlFiles(k8sRoot), join(repoRoot, 'deploy/compose.yaml')];
  let seen = 0;
  for (const file of files) {
    const names = readFileSync(file, 'utf8').match(/\bMEMQL_[A-Z0-9_]+/g) ?? [];
    seen += names.length;
    const unknown = [...new Set(names)].filter((n) => !known.has(n));
    t.same(unknown, [], `${rel(file)} names only known variables`);
  }
  t.ok(seen > 20, 'the files name the variables they set');
});
