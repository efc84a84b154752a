/**
 * One problem found while loading configuration. Tests and callers match on
 * `variable` (and `entry` for list-valued variables), never on message text.
 */
export interface ConfigIssue {
  /** The environment variable at fault, e.g. `MEMQL_COMMAND_CONCURRENCY`. */
  readonly variable: string;
  /**
   * The value as the loader saw it, trimmed; `''` when the problem is that the
   * variable is not set. Secret values are replaced by `[redacted]`.
   */
  readonly value: string;
  /** For list-valued variables (peer seeds, CIDRs, command names): the one bad entry. */
  readonly entry?: string;
  /** What would have been accepted, phrased to follow "expected ...". */
  readonly expected: string;
  /** The full human message: names the variable, the bad value and what is expected. */
  readonly message: string;
}

/** Where a value came from: the environment, or a default a binary supplied. */
export type ValueSource = 'env' | 'default';

/** The parts of an issue from which {@link formatIssue} builds its message. */
export interface IssueParts {
  /** See {@link ConfigIssue.variable}. */
  readonly variable: string;
  /** The value, or `undefined` when the variable is not set at all. */
  readonly value: string | undefined;
  /** See {@link ConfigIssue.entry}. */
  readonly entry?: string;
  /** See {@link ConfigIssue.expected}. */
  readonly expected: string;
  /** `'default'` marks a bad default handed in by a binary, so nobody hunts the environment for it. Default `'env'`. */
  readonly source?: ValueSource;
}

/** Builds a {@link ConfigIssue} with its message from its parts. */
export function formatIssue(parts: IssueParts): ConfigIssue {
  const { variable, value, entry, expected, source = 'env' } = parts;
  let message: string;
  if (value === undefined) {
    message = `${variable} is not set: expected ${expected}`;
  } else {
    message = `${variable}=${JSON.stringify(value)}`;
    if (entry !== undefined) message += `: entry ${JSON.stringify(entry)}`;
    message += `: expected ${expected}`;
    if (source === 'default') message += ' (this is the default the binary supplied)';
  }
  const issue: ConfigIssue = { variable, value: value ?? '', expected, message };
  return entry === undefined ? issue : { ...issue, entry };
}

/**
 * Configuration could not be loaded. Carries every problem found, not just the
 * first, so an operator can fix the whole environment in one pass.
 * `variable` and `value` repeat the first issue for callers that want one.
 */
export class ConfigError extends Error {
  /** Every problem found, in the order the variables were read. Never empty. */
  readonly issues: readonly ConfigIssue[];
  /** The variable of the first issue. */
  readonly variable: string;
  /** The (possibly redacted) value of the first issue. */
  readonly value: string;

  constructor(issues: readonly ConfigIssue[]) {
    const first = issues[0];
    if (first === undefined) throw new TypeError('ConfigError needs at least one issue');
    super(
      issues.length === 1
        ? first.message
        : `invalid configuration (${issues.length} problems):\n${issues.map((i) => `  - ${i.message}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.issues = issues;
    this.variable = first.variable;
    this.value = first.value;
  }
}
