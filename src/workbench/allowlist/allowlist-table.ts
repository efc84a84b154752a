/**
 * The exec allowlist as a Markdown table, for docs/security.md: generated from the lists the
 * checker uses, so the published allowlist cannot drift from the enforced one (a test
 * holds the copy in docs/security.md to it, with the programs the `runner` image's label declares).
 *
 * @module
 */

import {
  ALLOWED_PROGRAM_GROUPS,
  CHECKED_WRAPPERS,
  FORBIDDEN_BUILTINS,
  SHELLS,
  UNCHECKED_WRAPPERS,
} from './policy.js';
import { PROGRAM_RULES } from './program-rules.js';

/** Options of {@link renderAllowlistTable}. */
export interface AllowlistTableOptions {
  /**
   * The programs the docker runner's image declares (`memql.runner.programs`), listed in
   * a row of their own; absent: no such row.
   */
  readonly runnerImagePrograms?: readonly string[];
}

const names = (list: readonly string[]) => list.map((n) => `\`${n}\``).join(' ');

/** The table, one row per group, then the rules and what is never allowed. */
export function renderAllowlistTable(options: AllowlistTableOptions = {}): string {
  const rows: [string, string][] = ALLOWED_PROGRAM_GROUPS.map((group) => [
    `${group.label}: every runner`,
    names(group.programs),
  ]);
  if (options.runnerImagePrograms !== undefined) {
    rows.push([
      'Document tools: the docker runner, as its image declares them (the `memql.runner.programs` label of the `runner` image)',
      names(options.runnerImagePrograms),
    ]);
  }
  // Only the names some runner allows: a rule for a program no runner offers says nothing.
  const offered = new Set([
    ...ALLOWED_PROGRAM_GROUPS.flatMap((g) => g.programs),
    ...(options.runnerImagePrograms ?? []),
  ]);
  const ruled = Object.keys(PROGRAM_RULES).filter((name) => offered.has(name));
  rows.push(
    [
      'Checked wrappers: the program they run is checked as a command of its own',
      names(CHECKED_WRAPPERS),
    ],
    [
      'Allowed, with their options and scripts checked (`find -exec`, sed `e`, awk `system()`, `git -c`, `tar --to-command`, ImageMagick pipe and list file names, LibreOffice macro URLs, variables set by name)',
      names(ruled),
    ],
    ['Never: shells', names(SHELLS)],
    ['Never: builtins that run strings or change what names mean', names(FORBIDDEN_BUILTINS)],
    ['Never: wrappers whose program cannot be checked', names(UNCHECKED_WRAPPERS)],
  );
  return [
    '| Programs | Names |',
    '| --- | --- |',
    ...rows.map(([what, list]) => `| ${what} | ${list} |`),
    '',
  ].join('\n');
}
