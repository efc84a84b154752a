import { formatHostRule, type HostRule } from '../contract/index.js';
import type { Config } from './config.js';

/** What replaces a secret in anything meant for logs or messages. */
export const REDACTED = '[redacted]';

/**
 * A copy of `config` safe to log: the mesh token, the worker's API token, the S3
 * secret access key, the values of the egress secrets and the database password (in the URL's user info or query) are replaced by
 * `[redacted]`. The input is not changed.
 */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config);
  const database =
    copy.database.kind === 'postgres'
      ? { ...copy.database, url: redactUrlPassword(copy.database.url) }
      : copy.database;
  const objectStore =
    copy.objectStore.kind === 's3' && copy.objectStore.secretAccessKey !== null
      ? { ...copy.objectStore, secretAccessKey: REDACTED }
      : copy.objectStore;
  const mesh = copy.mesh.token === null ? copy.mesh : { ...copy.mesh, token: REDACTED };
  const worker = copy.worker === null ? null : { ...copy.worker, token: REDACTED };
  const egress = {
    ...copy.egress,
    secrets: copy.egress.secrets.map((secret) => ({ ...secret, value: REDACTED })),
  };
  return { ...copy, database, objectStore, mesh, worker, egress };
}

/**
 * The configuration as the boot log shows it: {@link redactConfig}'s copy, with
 * address ranges and host rules in their written form (`10.0.0.0/8`, `*.npmjs.org`)
 * rather than their bytes, and each egress secret's value redacted.
 */
export function configLogView(config: Config): unknown {
  const copy = redactConfig(config);
  const rules = (list: readonly HostRule[]) => list.map(formatHostRule);
  return {
    ...copy,
    fetch: { ...copy.fetch, allowPrivate: copy.fetch.allowPrivate.map((range) => range.text) },
    egress: {
      ceiling: rules(copy.egress.ceiling),
      secrets: copy.egress.secretNames.map((name) => {
        const secret = copy.egress.secrets.find((s) => s.name === name);
        return secret === undefined
          ? { name }
          : { name, hosts: rules(secret.hosts), header: secret.header, value: secret.value };
      }),
    },
  };
}

const PLACEHOLDER = 'memql-redacted-placeholder';

/**
 * `url` with its password, and any `password` / `sslpassword` query parameter,
 * replaced by `[redacted]`. Text that does not parse as a URL is redacted by
 * pattern, erring toward hiding too much.
 */
export function redactUrlPassword(url: string): string {
  if (URL.canParse(url)) {
    const parsed = new URL(url);
    if (parsed.password === '' && !/[?&](ssl)?password=/i.test(parsed.search)) return url;
    if (parsed.password !== '') parsed.password = PLACEHOLDER;
    for (const key of ['password', 'sslpassword']) {
      if (parsed.searchParams.has(key)) parsed.searchParams.set(key, PLACEHOLDER);
    }
    return parsed.toString().replaceAll(PLACEHOLDER, REDACTED);
  }
  return url
    .replace(/^([^:/?#]*:\/\/[^:/?#@]*):.*@/, `$1:${REDACTED}@`)
    .replace(/([?&](?:ssl)?password=)[^&#]*/gi, `$1${REDACTED}`);
}
