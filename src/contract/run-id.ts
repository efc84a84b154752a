/**
 * The syntax of a run id.
 *
 * A run id names a directory (`$MEMQL_WORKBENCH_ROOT/<runId>/`), a database key and an
 * object-store prefix, so the envelope parser, the workspace code and the sweeper must
 * agree on exactly one rule; this is it.
 *
 * @module
 */

/** Longest accepted run id, in characters. */
export const MAX_RUN_ID_CHARS = 128;

/**
 * A letter or digit, then letters, digits, `.`, `_` or `-`. Starting with an
 * alphanumeric rules out `.` and `..`, hidden directories, and names that read as
 * command-line options to an operator's `ls`/`rm`; the character class rules out
 * `/`, `\` and NUL, so a run id is always exactly one path segment.
 */
const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Check a run id. Returns `null` when it is acceptable, otherwise a short description
 * of the problem (used after the field name in `invalid_arguments` messages).
 */
export function checkRunId(runId: string): string | null {
  if (runId.length === 0) return 'must not be empty';
  if (runId.length > MAX_RUN_ID_CHARS) return `must be at most ${MAX_RUN_ID_CHARS} characters`;
  if (!RUN_ID_PATTERN.test(runId)) {
    return 'must start with a letter or digit and contain only letters, digits, ".", "_" or "-"';
  }
  return null;
}

/** Whether `value` is a string that passes {@link checkRunId}. */
export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && checkRunId(value) === null;
}
