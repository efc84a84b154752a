/**
 * The refusal of a command line and the checks every subcommand uses (its positionals,
 * a positive integer option), shared by the argument parsers.
 */

/** A command line `memql` cannot run; the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Exactly `names.length` positionals (plus up to `optional` more). */
export function take(
  rest: readonly string[],
  names: readonly string[],
  what: string,
  optional = 0,
): readonly string[] {
  if (rest.length < names.length) {
    throw new UsageError(`${what}: missing ${names.slice(rest.length).join(' ')}`);
  }
  if (rest.length > names.length + optional) {
    throw new UsageError(`${what}: unexpected argument "${rest[names.length + optional]}"`);
  }
  return rest;
}

/** The value of `--<flag>` as a positive integer; undefined when not given. */
export function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`--${flag} expects a positive integer`);
  return Number(value);
}
