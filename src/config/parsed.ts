/**
 * The outcome of parsing one setting: the value, or what would have been
 * accepted. Parsing a setting is ordinary data, so this is a result rather than
 * a throw; the loader gathers the failures into one ConfigError.
 */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      /** What would have been accepted, phrased to follow "expected". */
      readonly expected: string;
    };

/** A successful {@link Parsed}. */
export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

/** A failed {@link Parsed}: `expected` completes "expected ...". */
export function fail(expected: string): Parsed<never> {
  return { ok: false, expected };
}

/**
 * Puts the expected shape in front of a parser's complaint, turning
 * `the ":port" is missing` into `host:port, e.g. ...; the ":port" is missing`.
 */
export function withShape<T>(parsed: Parsed<T>, shape: string): Parsed<T> {
  return parsed.ok ? parsed : fail(`${shape}; ${parsed.expected}`);
}
