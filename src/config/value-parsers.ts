import path from 'node:path';
import { type CidrRange, NEEDS, type Need, parseCidr } from '../contract/index.js';
import { fail, ok, type Parsed, withShape } from './parsed.js';

// Parsers for single setting values. Each takes the trimmed, non-empty text of
// one variable and returns the typed value or what would have been accepted.
// All are pure: paths are resolved against a working directory handed in, never
// against process.cwd().

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off']);

/** `1/0`, `true/false`, `yes/no`, `on/off`, any case. Anything else fails. */
export function parseBoolean(text: string): Parsed<boolean> {
  const word = text.toLowerCase();
  if (TRUE_WORDS.has(word)) return ok(true);
  if (FALSE_WORDS.has(word)) return ok(false);
  return fail('a boolean: 1/0, true/false, yes/no or on/off');
}

/**
 * One CIDR range (`127.0.0.0/8`, `fd00::/8`), through the contract's one parser:
 * strict address text, a required prefix, host bits cleared. The failure says what
 * is wrong (`the "/prefix" is missing`, `... is not an IPv4 or IPv6 address`,
 * `the prefix length must be 0 to 32`).
 */
export function parseCidrSetting(text: string): Parsed<CidrRange> {
  const parsed = parseCidr(text);
  return withShape(
    parsed.ok ? ok(parsed.range) : fail(parsed.problem),
    'a CIDR range such as 127.0.0.0/8 or fd00::/8',
  );
}

/** Options for {@link integerParser}. */
export interface IntegerOptions {
  /** Smallest accepted value. */
  readonly min: 0 | 1;
  /** The unit, spelled as in "a positive integer number of milliseconds". Default: no unit. */
  readonly unit?: 'milliseconds' | 'bytes';
}

/**
 * A parser for a whole decimal number: digits only, no sign, no fraction, no
 * exponent, no unit suffix (the unit is in the variable's name), at most
 * `Number.MAX_SAFE_INTEGER`.
 */
export function integerParser(options: IntegerOptions): (text: string) => Parsed<number> {
  const kind = options.min === 1 ? 'a positive integer' : 'a non-negative integer';
  const expected = options.unit === undefined ? kind : `${kind} number of ${options.unit}`;
  return (text) => {
    const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < options.min) return fail(expected);
    return ok(value);
  };
}

/** Fewest and most CPUs {@link parseCpus} accepts; 0.01 is Docker's floor and the CFS quota's. */
export const CPUS_RANGE = { min: 0.01, max: 1024 } as const;

/**
 * A number of CPUs as a plain decimal (`1`, `0.5`, `2.25`): digits with an optional
 * fraction, no sign, no exponent, within {@link CPUS_RANGE}.
 */
export function parseCpus(text: string): Parsed<number> {
  const value = /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= CPUS_RANGE.min && value <= CPUS_RANGE.max)) {
    return fail(
      `a decimal number of CPUs from ${CPUS_RANGE.min} to ${CPUS_RANGE.max}, e.g. 1 or 0.5`,
    );
  }
  return ok(value);
}

/** A parser that accepts exactly one of `choices`, case-insensitively; yields the choice. */
export function oneOfParser<T extends string>(choices: readonly T[]): (text: string) => Parsed<T> {
  return (text) => {
    const word = text.toLowerCase();
    const found = choices.find((choice) => choice === word);
    return found === undefined ? fail(`one of ${choices.join(', ')}`) : ok(found);
  };
}

/** Splits a comma-separated list; entries are trimmed and empty ones (a trailing comma) skipped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** Where relative paths stand and which path syntax applies. */
export interface PathContext {
  /** `process.platform`-style name; `win32` selects Windows path syntax. */
  readonly platform: string;
  /** Absolute directory against which relative paths resolve; `undefined` refuses relative paths. */
  readonly cwd: string | undefined;
}

/**
 * A parser for a filesystem path, normalised and without a trailing separator.
 * With `mustBeAbsolute`, or when `context.cwd` is absent, a relative path fails.
 */
export function pathParser(
  context: PathContext,
  mustBeAbsolute: boolean,
): (text: string) => Parsed<string> {
  const api = context.platform === 'win32' ? path.win32 : path.posix;
  return (text) => {
    if (text.includes('\0')) return fail('a path without NUL characters');
    let resolved: string;
    if (api.isAbsolute(text)) {
      resolved = api.normalize(text);
    } else if (!mustBeAbsolute && context.cwd !== undefined && api.isAbsolute(context.cwd)) {
      resolved = api.join(context.cwd, text);
    } else {
      return fail('an absolute path');
    }
    const root = api.parse(resolved).root;
    while (resolved.length > root.length && /[\\/]$/.test(resolved))
      resolved = resolved.slice(0, -1);
    return ok(resolved);
  };
}

/** A URL whose scheme is `postgres:` or `postgresql:`. Yields the text unchanged. */
export function parsePostgresUrl(text: string): Parsed<string> {
  const expected = 'a postgres:// or postgresql:// URL';
  if (!URL.canParse(text)) return fail(expected);
  const url = new URL(text);
  return url.protocol === 'postgres:' || url.protocol === 'postgresql:' ? ok(text) : fail(expected);
}

/** An `http:` or `https:` URL with a host (an S3-compatible endpoint). Yields the text unchanged. */
export function parseHttpUrl(text: string): Parsed<string> {
  const expected = 'an http:// or https:// URL, e.g. http://minio:9000';
  if (!URL.canParse(text)) return fail(expected);
  const url = new URL(text);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    return fail(expected);
  }
  return ok(text);
}

/**
 * A node id: letters, digits, `.`, `_`, `-`, starting with a letter or digit,
 * at most 128 characters. It is stamped on workspace rows and part of their ids,
 * so it must be stable and safe in any id or log.
 */
export function parseNodeId(text: string): Parsed<string> {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(text)
    ? ok(text)
    : fail(
        'a node id: letters, digits, ".", "_" or "-", starting with a letter or digit, at most 128 characters',
      );
}

/** A container image reference such as `memql/runner:latest` or `reg:5000/x@sha256:...`. */
export function parseImageRef(text: string): Parsed<string> {
  return /^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$/.test(text)
    ? ok(text)
    : fail('a container image reference, e.g. memql/runner:latest');
}

/** A single token without whitespace (S3 region, access key id, secret). */
export function parseWord(text: string): Parsed<string> {
  return /\s/.test(text) ? fail('a value without whitespace') : ok(text);
}

/** The shortest mesh token accepted, in characters. A short shared secret is guessable. */
export const MESH_TOKEN_MIN_LENGTH = 16;

/** A mesh token: at least {@link MESH_TOKEN_MIN_LENGTH} characters, no whitespace. */
export function parseMeshToken(text: string): Parsed<string> {
  return text.length >= MESH_TOKEN_MIN_LENGTH && !/\s/.test(text)
    ? ok(text)
    : fail(`a shared secret of at least ${MESH_TOKEN_MIN_LENGTH} characters without whitespace`);
}

/**
 * An S3 bucket name: 3 to 63 characters, letters, digits, `.`, `_`, `-`,
 * starting and ending with a letter or digit. (Uppercase and `_` are only valid
 * for legacy AWS buckets, but S3-compatible servers accept them.)
 */
export function parseBucket(text: string): Parsed<string> {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]$/.test(text)
    ? ok(text)
    : fail(
        'a bucket name of 3 to 63 characters (letters, digits, ".", "_", "-"), starting and ending with a letter or digit',
      );
}

/**
 * An S3 key prefix. A non-empty prefix gets a trailing `/` so that `memql`
 * yields keys `memql/<key>`, not `memql<key>`; a leading `/` is refused because
 * S3 would keep it as part of the key.
 */
export function parseS3Prefix(text: string): Parsed<string> {
  if (text.startsWith('/') || /\s/.test(text)) {
    return fail('a key prefix without a leading "/" or whitespace, e.g. memql/');
  }
  return ok(text.endsWith('/') ? text : `${text}/`);
}

/** A bare command name for the exec allowlist: no path, no whitespace, no shell syntax. */
export function parseCommandName(text: string): Parsed<string> {
  return /^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(text)
    ? ok(text)
    : fail('a bare command name such as jq (letters, digits, ".", "_", "+", "-"; no path)');
}

/**
 * A bearer token as gRPC metadata can carry it: printable ASCII without whitespace
 * (an API token is `mqt_` and base64url).
 */
export function parseBearerToken(text: string): Parsed<string> {
  return /^[\x21-\x7e]+$/.test(text)
    ? ok(text)
    : fail('an API token: printable ASCII characters without whitespace');
}

/** One need of the closed set a worker host can offer. */
export function parseNeed(text: string): Parsed<Need> {
  const found = NEEDS.find((need) => need === text.toLowerCase());
  return found === undefined ? fail(`one of ${NEEDS.join(', ')}`) : ok(found);
}
