/**
 * The egress settings: the ceiling every run's network is bounded by
 * (`MEMQL_EGRESS_CEILING`, host rules) and the operator's secrets
 * (`MEMQL_EGRESS_SECRETS`), which a run opts into by name and the egress proxy adds to
 * requests to their hosts. Pure: a secret's value comes from an environment variable of
 * the env handed in, or from a file through the reader the binary passes.
 *
 * `MEMQL_EGRESS_SECRETS` is a JSON object, one member per secret, shaped for a
 * Kubernetes Secret mounted as a file or passed as an environment variable:
 *
 * ```json
 * {"github": {"hosts": ["github.com"], "header": "Authorization", "prefix": "Basic ",
 *             "file": "/var/run/secrets/memql/github/token"},
 *  "pypi":   {"hosts": ["pypi.internal.example"], "header": "Authorization",
 *             "prefix": "Bearer ", "env": "PYPI_TOKEN"}}
 * ```
 *
 * The setting holds references only; a value is never written in it, and never appears
 * in an error, a warning or the logged configuration.
 *
 * @module
 */

import {
  formatAddress,
  formatHostRule,
  type HostRule,
  normalizeHostName,
  parseHostRule,
  parseIPv4Strict,
  parseIPv6,
  SECRET_NAME_PATTERN,
  withinCeiling,
} from '../contract/index.js';
import type { ConfigWarning, EgressConfig, EgressResolveEntry, EgressSecret } from './config.js';
import type { Env, EnvReader } from './env-reader.js';
import { fail, ok, type Parsed } from './parsed.js';
import { REDACTED } from './redact.js';

/** Reads a whole file as UTF-8 (`readFileSync`); throws with a `code` such as `ENOENT`. */
export type FileReader = (path: string) => string;

/** What reading the egress settings needs beyond the reader. */
export interface EgressReadOptions {
  /** The environment, for secrets whose value is in an environment variable. */
  readonly env: Env;
  /** Reads secret files; absent: a `file` secret is refused, naming the option. */
  readonly readFile: FileReader | undefined;
  /** Read the values; false: check the setting and keep the names only. */
  readonly values: boolean;
  /** Where boot warnings go. */
  readonly warnings: ConfigWarning[];
}

/** Longest secret value accepted, in characters: a header, not a document. */
export const MAX_SECRET_VALUE_CHARS = 8192;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers a secret may not be: they frame the request or address the proxy, and the
 * proxy sets them itself.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

/** Printable ASCII and tab: what a header value may hold without breaking a request. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** One entry of `MEMQL_EGRESS_CEILING`. */
export function parseHostRuleSetting(text: string): Parsed<HostRule> {
  const parsed = parseHostRule(text);
  return parsed.ok
    ? ok(parsed.rule)
    : fail(`a host rule such as pypi.org, *.npmjs.org or github.com:443; ${parsed.problem}`);
}

/** One entry of `MEMQL_EGRESS_RESOLVE`: `host=address`, the address in plain notation. */
export function parseResolveEntry(text: string): Parsed<EgressResolveEntry> {
  const shape = 'host=address, e.g. pypi.internal=10.0.0.7';
  const at = text.indexOf('=');
  if (at <= 0) return fail(shape);
  const host = normalizeHostName(text.slice(0, at).trim());
  if (host === null) return fail(`${shape}, with a DNS name before "="`);
  const addressText = text.slice(at + 1).trim();
  const v4 = parseIPv4Strict(addressText);
  const v6 = v4 === null ? parseIPv6(addressText) : null;
  const bytes = v4 ?? v6;
  if (bytes === null) {
    return fail(`${shape}, with an IPv4 or IPv6 address in plain notation after "="`);
  }
  return ok({ host, address: formatAddress({ family: v4 ? 4 : 6, bytes }) });
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** `MEMQL_EGRESS_CA_FILE`, read when values are: its certificates, PEM; null when unset. */
function readCaFile(r: EnvReader, options: EgressReadOptions): string | null {
  const found = r.lookup('MEMQL_EGRESS_CA_FILE');
  if (found === undefined || found.text.trim() === '' || !options.values) return null;
  const report = (expected: string) =>
    r.report('MEMQL_EGRESS_CA_FILE', {
      variable: found.variable,
      value: found.text,
      expected,
      source: found.source,
    });
  if (options.readFile === undefined) {
    report('a readable PEM file; this binary reads no files');
    return null;
  }
  let text: string;
  try {
    text = options.readFile(found.text);
  } catch (err) {
    report(
      `a readable PEM file (reading it failed: ${(err as NodeJS.ErrnoException).code ?? 'an error'})`,
    );
    return null;
  }
  const certificates = text.match(PEM_CERTIFICATE);
  if (certificates === null) {
    report('a PEM file of one or more certificates (-----BEGIN CERTIFICATE-----)');
    return null;
  }
  return `${certificates.join('\n')}\n`;
}

/**
 * Reads the `MEMQL_EGRESS_*` settings: the ceiling, the secrets, the resolver map and
 * the extra CA file.
 */
export function readEgress(r: EnvReader, options: EgressReadOptions): EgressConfig {
  const resolve = r.list('MEMQL_EGRESS_RESOLVE', parseResolveEntry);
  const caPem = readCaFile(r, options);
  return { ...readCeilingAndSecrets(r, options), resolve, caPem };
}

/** Reads `MEMQL_EGRESS_CEILING` and `MEMQL_EGRESS_SECRETS`. */
function readCeilingAndSecrets(
  r: EnvReader,
  options: EgressReadOptions,
): Pick<EgressConfig, 'ceiling' | 'secretNames' | 'secrets'> {
  const seen = new Set<string>();
  const ceiling = r.list('MEMQL_EGRESS_CEILING', parseHostRuleSetting).filter((rule) => {
    const text = formatHostRule(rule);
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
  const found = r.lookup('MEMQL_EGRESS_SECRETS');
  if (found === undefined) return { ceiling, secretNames: [], secrets: [] };
  // Never quoted: the setting holds references, but a value pasted into it by mistake
  // must not reach a log line through its error.
  const problem = (entry: string | undefined, expected: string) =>
    r.report('MEMQL_EGRESS_SECRETS', {
      variable: found.variable,
      value: REDACTED,
      ...(entry === undefined ? {} : { entry }),
      expected,
      source: found.source,
    });
  let document: unknown;
  try {
    document = JSON.parse(found.text);
  } catch {
    problem(undefined, `a JSON object of secrets, e.g. ${EXAMPLE}`);
    return { ceiling, secretNames: [], secrets: [] };
  }
  if (!isRecord(document)) {
    problem(undefined, `a JSON object of secrets, e.g. ${EXAMPLE}`);
    return { ceiling, secretNames: [], secrets: [] };
  }
  const secretNames: string[] = [];
  const secrets: EgressSecret[] = [];
  for (const [name, spec] of Object.entries(document)) {
    const parsed = readSecret(name, spec, options);
    if (!parsed.ok) {
      problem(name, parsed.expected);
      continue;
    }
    secretNames.push(name);
    if (parsed.value !== null) secrets.push(parsed.value);
    const { outside } = withinCeiling(ceiling, parsed.hosts);
    if (outside.length > 0 && !r.failed('MEMQL_EGRESS_CEILING')) {
      options.warnings.push({
        variable: 'MEMQL_EGRESS_SECRETS',
        message: `secret "${name}": ${outside.map(formatHostRule).join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside MEMQL_EGRESS_CEILING, so no run can reach ${outside.length === 1 ? 'it' : 'them'} and the secret is never sent there`,
      });
    }
  }
  return { ceiling, secretNames, secrets };
}

const EXAMPLE =
  '{"github": {"hosts": ["github.com"], "header": "Authorization", "prefix": "Bearer ", "file": "/var/run/secrets/memql/github/token"}}';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const SECRET_FIELDS = ['hosts', 'header', 'prefix', 'file', 'env'];

/**
 * One secret: its hosts and header checked, its value read unless `values` is off
 * (then `value` is null). Failures say what is expected and never quote a value.
 */
function readSecret(
  name: string,
  spec: unknown,
  options: EgressReadOptions,
): { ok: true; value: EgressSecret | null; hosts: HostRule[] } | { ok: false; expected: string } {
  const no = (expected: string) => ({ ok: false as const, expected });
  if (!SECRET_NAME_PATTERN.test(name)) {
    return no('a secret name of lower-case letters, digits, "-" and "_" (at most 64)');
  }
  if (!isRecord(spec)) {
    return no('an object {hosts, header, prefix?, file | env}');
  }
  const unknown = Object.keys(spec).find((key) => !SECRET_FIELDS.includes(key));
  if (unknown !== undefined) {
    return no(
      `only the fields ${SECRET_FIELDS.join(', ')}, not "${unknown}" (a value is never written in this setting: name a file or an environment variable that holds it)`,
    );
  }
  const { hosts, header, prefix = '', file, env } = spec;
  if (!Array.isArray(hosts) || hosts.length === 0) {
    return no('"hosts": a non-empty array of host rules the secret is sent to');
  }
  const rules: HostRule[] = [];
  for (const host of hosts) {
    const parsed = typeof host === 'string' ? parseHostRule(host) : null;
    if (parsed === null || !parsed.ok) {
      return no(
        `"hosts": host rules such as github.com or *.example.com${parsed === null ? '' : `; ${parsed.problem}`}`,
      );
    }
    rules.push(parsed.rule);
  }
  if (typeof header !== 'string' || !HEADER_NAME.test(header)) {
    return no('"header": an HTTP header name such as Authorization');
  }
  const lower = header.toLowerCase();
  if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-')) {
    return no(`"header": a header other than ${header}, which the proxy sets itself`);
  }
  if (typeof prefix !== 'string' || !HEADER_VALUE.test(prefix)) {
    return no('"prefix": printable text put before the value, such as "Bearer "');
  }
  if ((file === undefined) === (env === undefined)) {
    return no('exactly one of "file" (a path) and "env" (a variable name) holding the value');
  }
  const source = readSource(file, env, options);
  if (!source.ok) return source;
  if (source.value === null) return { ok: true, value: null, hosts: rules };
  const value = `${prefix}${source.value}`;
  if (source.value.length === 0) return no(`a value: ${source.where} is empty`);
  if (value.length > MAX_SECRET_VALUE_CHARS || !HEADER_VALUE.test(value)) {
    return no(
      `${source.where} to hold one line of printable ASCII of at most ${MAX_SECRET_VALUE_CHARS} characters (a header value)`,
    );
  }
  return { ok: true, value: { name, hosts: rules, header, value }, hosts: rules };
}

/** The raw value from its source (one trailing newline dropped), or null when not read. */
function readSource(
  file: unknown,
  env: unknown,
  options: EgressReadOptions,
): { ok: true; value: string | null; where: string } | { ok: false; expected: string } {
  if (env !== undefined) {
    if (typeof env !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(env)) {
      return { ok: false, expected: '"env": the name of an environment variable' };
    }
    if (env.startsWith('MEMQL_')) {
      return {
        ok: false,
        expected: `"env": a variable outside MEMQL_* (those are settings), e.g. GITHUB_TOKEN, not ${env}`,
      };
    }
    const where = `the environment variable ${env}`;
    if (!options.values) return { ok: true, value: null, where };
    const value = options.env[env];
    if (value === undefined) return { ok: false, expected: `${where} to be set` };
    return { ok: true, value: value.replace(/\r?\n$/, ''), where };
  }
  if (typeof file !== 'string' || !file.startsWith('/') || file.includes('\0')) {
    return { ok: false, expected: '"file": an absolute path' };
  }
  const where = `the file ${file}`;
  if (!options.values) return { ok: true, value: null, where };
  if (options.readFile === undefined) {
    return { ok: false, expected: `${where} to be readable; this binary reads no files` };
  }
  try {
    return { ok: true, value: options.readFile(file).replace(/\r?\n$/, ''), where };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'an error';
    return { ok: false, expected: `${where} to be readable (reading it failed: ${code})` };
  }
}
