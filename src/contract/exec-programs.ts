/**
 * What `exec` may run, in one line for a model: the `exec` description of the
 * `workbenchHost` tool and of the MCP `exec` tool carry it, and the `command_not_allowed`
 * payload lists every allowed program. The allowlist itself lives in the workbench
 * (`workbench/allowlist/`); a test holds these names to it, so the line never promises
 * a program the allowlist refuses.
 *
 * @module
 */

/** The names the summary gives, by what the allowlist says of them. */
export const EXEC_SUMMARY_PROGRAMS = {
  /** Allowed everywhere (a sample of the default list). */
  allowed: [
    'ls',
    'cat',
    'find',
    'grep',
    'sed',
    'awk',
    'sort',
    'diff',
    'tar',
    'gzip',
    'zip',
    'sha256sum',
    'curl',
    'wget',
    'python3',
    'node',
    'go',
    'git',
    'jq',
    'yq',
  ],
  /** Allowed where the runner image provides them (the docker runner's `runner` image). */
  runnerImage: ['soffice', 'pdftoppm', 'pdftotext', 'convert'],
  /** Never allowed, whatever an operator adds. */
  never: ['sh', 'bash', 'eval', 'exec', 'source', 'sudo'],
} as const;

const { allowed, runnerImage, never } = EXEC_SUMMARY_PROGRAMS;

/** The one line. */
export const EXEC_PROGRAMS_SUMMARY =
  `Programs: ${allowed.join(', ')} and the other usual file, text, archive and hash tools; ` +
  `on the docker runner also LibreOffice, Poppler and ImageMagick (${runnerImage.join(', ')}). ` +
  `Never ${never.join(', ')} or other shells and wrappers; a command_not_allowed refusal lists every allowed program.`;
