/**
 * Reading and checking the deployment files offline: every Kubernetes document is
 * validated by the `kubernetes-models` class of its apiVersion and kind (the schemas
 * ship in the package; nothing is downloaded), and a field no schema knows is
 * reported too, which those validators alone let through.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import { Service } from 'kubernetes-models/v1/Service';
import { parse, parseAllDocuments } from 'yaml';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const k8sRoot = join(repoRoot, 'deploy/k8s');

/** A class of `kubernetes-models`: `new Deployment(doc).validate()` throws on a bad doc. */
interface ModelClass {
  new (data: never): { validate(): void };
  readonly prototype: { validate(): void };
}

/** Every kind the manifests may use, by `apiVersion kind`. Anything else is refused. */
const MODELS: ReadonlyMap<string, ModelClass> = new Map<string, ModelClass>([
  ['v1 Namespace', Namespace],
  ['v1 Service', Service],
  ['apps/v1 Deployment', Deployment],
  ['batch/v1 Job', Job],
  ['policy/v1 PodDisruptionBudget', PodDisruptionBudget],
  ['networking.k8s.io/v1 NetworkPolicy', NetworkPolicy],
]);

/** A Kubernetes object as parsed, before validation. */
export interface K8sDoc {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: { readonly name?: string; readonly annotations?: Record<string, string> };
  readonly [field: string]: unknown;
}

/** One parsed document and the file it came from (relative to the repository). */
export interface LoadedDoc {
  readonly file: string;
  readonly doc: K8sDoc;
}

/** The YAML files under `dir`, recursively, as absolute paths. */
export function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...yamlFiles(path));
    else if (/\.ya?ml$/.test(name)) out.push(path);
  }
  return out;
}

/** Every document of a YAML file; throws on a syntax error, naming the file. */
export function readYamlDocuments(path: string): K8sDoc[] {
  return parseYamlDocuments(readFileSync(path, 'utf8'), rel(path));
}

/** Every non-empty document of a YAML text; throws on a syntax error, naming `source`. */
export function parseYamlDocuments(text: string, source: string): K8sDoc[] {
  const out: K8sDoc[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) {
      throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    }
    const value: unknown = doc.toJS();
    if (value !== null) out.push(value as K8sDoc);
  }
  return out;
}

/** The parts of a kustomization.yaml the tests read. */
export interface Kustomization {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly resources?: string[];
  readonly images?: { name: string; newName?: string; newTag?: string }[];
  readonly secretGenerator?: { name: string; literals?: string[] }[];
  readonly patches?: { path?: string; patch?: string; target?: { kind?: string; name?: string } }[];
  readonly [field: string]: unknown;
}

/** The kustomization.yaml of `dir` (a folder under deploy/k8s). */
export function readKustomization(dir: string): Kustomization {
  const docs = readYamlDocuments(join(k8sRoot, dir, 'kustomization.yaml'));
  if (docs.length !== 1)
    throw new Error(`${dir}/kustomization.yaml holds ${docs.length} documents`);
  return docs[0] as Kustomization;
}

/** The dev overlay's generated Secrets: secret name, then key, then value. */
export function devSecrets(): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const generator of readKustomization('dev').secretGenerator ?? []) {
    const pairs = (generator.literals ?? []).map((l) => {
      const eq = l.indexOf('=');
      return [l.slice(0, eq), l.slice(eq + 1)] as const;
    });
    out.set(generator.name, new Map(pairs));
  }
  return out;
}

/** The compose file, with YAML merge keys (`<<: *anchor`) applied as Compose does. */
export function readCompose(): ComposeFile {
  return parse(readFileSync(join(repoRoot, 'deploy/compose.yaml'), 'utf8'), {
    merge: true,
  }) as ComposeFile;
}

/** The parts of a compose file the tests read. */
export interface ComposeFile {
  readonly services: Record<string, ComposeService>;
  readonly volumes?: Record<string, unknown>;
}

/** One compose service, as far as the tests read it. */
export interface ComposeService {
  readonly image?: string;
  readonly build?: { context?: string; dockerfile?: string; target?: string };
  readonly environment?: Record<string, string | number | boolean>;
  readonly ports?: string[];
  readonly volumes?: string[];
  readonly cap_add?: string[];
  readonly cap_drop?: string[];
  readonly security_opt?: string[];
  readonly user?: string;
  readonly tmpfs?: string[];
}

/** Every Kubernetes object under deploy/k8s (kustomization files left out). */
export function loadK8sDocs(): LoadedDoc[] {
  return yamlFiles(k8sRoot)
    .filter((path) => !path.endsWith('/kustomization.yaml'))
    .flatMap((path) => readYamlDocuments(path).map((doc) => ({ file: rel(path), doc })));
}

/** `path` relative to the repository root. */
export function rel(path: string): string {
  return relative(repoRoot, path);
}

/**
 * What is wrong with one document, or `[]`: an unknown apiVersion or kind, a schema
 * violation, or a field the schema does not define (a typo such as `replica:`).
 */
export function validateDoc(doc: K8sDoc): string[] {
  const model = MODELS.get(`${String(doc.apiVersion)} ${String(doc.kind)}`);
  if (model === undefined) {
    return [`unknown apiVersion/kind ${String(doc.apiVersion)} ${String(doc.kind)}`];
  }
  try {
    new model(doc as never).validate();
  } catch (err) {
    return [(err as Error).message];
  }
  return unknownFields(model, doc).map((path) => `unknown field ${path}`);
}

/**
 * The fields of `doc` its schema does not define. The generated validators read
 * every property they know, and only those, so a field the validator never read is
 * unknown to the schema. Run on a valid document only: a failing one stops early.
 */
function unknownFields(model: ModelClass, doc: K8sDoc): string[] {
  const read = new Set<string>();
  const watch = (value: unknown, path: string): unknown => {
    if (value === null || typeof value !== 'object') return value;
    return new Proxy(value, {
      get(target, key, receiver) {
        const field: unknown = Reflect.get(target, key, receiver);
        if (typeof key !== 'string') return field;
        read.add(`${path}/${key}`);
        return watch(field, `${path}/${key}`);
      },
    });
  };
  model.prototype.validate.call(watch(structuredClone(doc), ''));
  const unknown: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, field] of Object.entries(value)) {
      const at = `${path}/${key}`;
      if (read.has(at)) walk(field, at);
      else unknown.push(at);
    }
  };
  walk(doc, '');
  return unknown;
}

/** The pod template of a Deployment or Job, else null. */
export function podTemplate(doc: K8sDoc): IPodTemplateSpec | null {
  const spec = doc.spec as { template?: IPodTemplateSpec } | undefined;
  return doc.kind === 'Deployment' || doc.kind === 'Job' ? (spec?.template ?? null) : null;
}

/** Every container (init containers too) of a document's pod template. */
export function containersOf(doc: K8sDoc): IContainer[] {
  const pod = podTemplate(doc)?.spec;
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])];
}

/** A container's environment by name. */
export function envOf(container: IContainer): Map<string, IEnvVar> {
  return new Map((container.env ?? []).map((e) => [e.name, e]));
}

/** The one document of `kind` named `name`; throws when there is not exactly one. */
export function findDoc(docs: readonly LoadedDoc[], kind: string, name: string): K8sDoc {
  const found = docs.filter((d) => d.doc.kind === kind && d.doc.metadata?.name === name);
  if (found.length !== 1) throw new Error(`${found.length} ${kind} named ${name}, expected 1`);
  return found[0]!.doc;
}

/** The pod IP {@link resolveEnv} gives `status.podIP`. */
export const POD_IP = '10.244.1.17';

/** The downward-API fields {@link resolveEnv} resolves, for a pod of that name. */
const FIELD_VALUES: Readonly<Record<string, (podName: string) => string>> = {
  'metadata.name': (podName) => podName,
  'status.podIP': () => POD_IP,
};

/**
 * A container's environment as the kubelet would give it: `value`s as written, the
 * pod name for `fieldRef: metadata.name` (and {@link POD_IP} for `status.podIP`), `$(NAME)`
 * expanded, and Secret keys from `secrets`. Throws on a
 * reference it cannot resolve (a Secret key missing and not optional).
 */
export function resolveEnv(
  container: IContainer,
  podName: string,
  secrets: ReadonlyMap<string, ReadonlyMap<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    if (from?.fieldRef) {
      const value = FIELD_VALUES[from.fieldRef.fieldPath]?.(podName);
      if (value === undefined) {
        throw new Error(`${e.name}: fieldRef ${from.fieldRef.fieldPath} is not resolved here`);
      }
      env[e.name] = value;
    } else if (from?.secretKeyRef) {
      const { name, key, optional } = from.secretKeyRef;
      const value = secrets.get(name ?? '')?.get(key);
      if (value !== undefined) env[e.name] = value;
      else if (!optional) throw new Error(`${e.name}: Secret ${name} has no key ${key}`);
    } else if (from) {
      throw new Error(`${e.name}: valueFrom ${Object.keys(from).join()} is not resolved here`);
    } else {
      // Kubernetes expands $(NAME) of a variable defined earlier in the list.
      env[e.name] = (e.value ?? '').replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, name) =>
        name in env ? (env[name] as string) : ref,
      );
    }
  }
  return env;
}
