/**
 * The actions of `workbenchHost` and the schema of each action's `args`.
 *
 * These schemas are the single definition: the envelope parser validates with them
 * and the tool definition given to models is generated from them. They check shape
 * and bounds only. What a path means (absolute, `..`, symlinks) is decided by the
 * workbench's safe-path check, which answers `invalid_path`; here a path is just a
 * bounded, non-empty string, so the two checks cannot disagree about path rules.
 *
 * @module
 */

import { z } from 'zod';
import {
  commandEnv,
  commandLine,
  DEFAULT_LIST_LIMIT,
  encoding,
  MAX_ARTIFACT_NAME_CHARS,
  MAX_EXPECTED_OUTPUTS,
  MAX_LIST_LIMIT,
  MAX_PAYLOAD_CHARS,
  MAX_UPLOAD_BYTES,
  MAX_URL_CHARS,
  timeoutMs,
  UPLOAD_ID_PATTERN,
  workspacePath,
} from './arg-fields.js';
import {
  processListArgsSchema,
  processOutputArgsSchema,
  processResizeArgsSchema,
  processShellArgsSchema,
  processSignalArgsSchema,
  processStartArgsSchema,
  processWaitArgsSchema,
  processWriteArgsSchema,
} from './process-actions.js';
import {
  versionCheckpointArgsSchema,
  versionDiffArgsSchema,
  versionListArgsSchema,
  versionRestoreArgsSchema,
} from './version-actions.js';

export {
  DEFAULT_LIST_LIMIT,
  ENV_NAME_PATTERN,
  MAX_ARTIFACT_NAME_CHARS,
  MAX_COMMAND_CHARS,
  MAX_ENV_ENTRIES,
  MAX_ENV_VALUE_CHARS,
  MAX_EXPECTED_OUTPUTS,
  MAX_FILE_WRITE_BYTES,
  MAX_LIST_LIMIT,
  MAX_PATH_CHARS,
  MAX_PAYLOAD_CHARS,
  MAX_TIMEOUT_MS,
  MAX_UPLOAD_BYTES,
  MAX_URL_CHARS,
  PAYLOAD_ARG_FIELDS,
  UPLOAD_ID_PATTERN,
} from './arg-fields.js';

/** `fs_write`: create or replace (or append to) a file in the workspace. */
export const fsWriteArgsSchema = z.strictObject({
  /** Workspace-relative file path; parent directories are created. */
  path: workspacePath(),
  /** The bytes to write, as text or base64 according to `encoding`. */
  content: z.string().max(MAX_PAYLOAD_CHARS).describe('The file content.'),
  /** Encoding of `content`; `utf8` unless binary bytes are sent as base64. */
  encoding: encoding(),
  /** Append to an existing file instead of replacing it. */
  append: z.boolean().default(false).describe('Append instead of replacing the file.'),
  /**
   * Permission bits as octal digits in a string, `'644'` or `'0755'`, parsed into the
   * numeric mode (`'644'` becomes `0o644`). A string, because JSON has no octal literal
   * and a bare number 644 would silently mean decimal 644. Only 0..0o777: setuid,
   * setgid and sticky bits are not the agent's to set.
   */
  mode: z
    .string()
    .regex(/^0?[0-7]{3}$/, { error: 'expected octal permission digits such as "644" or "0755"' })
    .transform((digits) => Number.parseInt(digits, 8))
    .describe('Optional octal permission bits as a string, e.g. "644" or "0755".')
    .optional(),
  /**
   * One part of a file larger than one call carries. Parts with the same `id` are
   * staged outside the workspace in order (`offset` is the number of bytes staged so
   * far; 0 starts the upload again); the part with `complete: true` puts the whole
   * file at `path` in one rename, so no partial file is ever visible. Not with
   * `append`. Staged bytes count against the workspace quota; a refused part removes
   * them (but for a part out of order), and so does a part with `abort: true`.
   */
  upload: z
    .strictObject({
      id: z
        .string()
        .regex(UPLOAD_ID_PATTERN, { error: 'expected 8 to 64 letters, digits, "_" or "-"' })
        .describe('Id of the upload, chosen by the caller; the same for every part.'),
      offset: z
        .int()
        .min(0)
        .max(MAX_UPLOAD_BYTES)
        .describe('Byte offset of this part: the bytes staged so far (0 for the first part).'),
      complete: z
        .boolean()
        .default(false)
        .describe('True on the last part: the staged file then replaces the file at path.'),
      size: z
        .int()
        .min(0)
        .max(MAX_UPLOAD_BYTES)
        .describe('Total size in bytes, checked when the upload completes.')
        .optional(),
      abort: z
        .boolean()
        .default(false)
        .describe(
          'True to give the upload up: its staged bytes are removed and nothing is written (send empty content).',
        ),
    })
    .describe(
      'Write a large file in parts: staged out of sight, placed at path whole by the part with complete: true.',
    )
    .optional(),
});

/** `fs_read`: read a file, or a byte range of it. */
export const fsReadArgsSchema = z.strictObject({
  /** Workspace-relative file path. */
  path: workspacePath(),
  /** How the answer's content is encoded; use `base64` for binary files. */
  encoding: encoding(),
  /** Byte offset to start reading at. */
  offset: z.int().min(0).default(0).describe('Byte offset to start at.'),
  /** Bytes to read; the rest of the file (up to the size limit) when omitted. */
  length: z.int().positive().describe('Number of bytes to read.').optional(),
});

/** `fs_list`: list a directory. */
export const fsListArgsSchema = z.strictObject({
  /** Workspace-relative directory; the workspace root by default. */
  path: workspacePath().default('.'),
  /** Descend into subdirectories. */
  recursive: z.boolean().default(false).describe('List subdirectories too.'),
  /** Most entries to return; the answer says when it was truncated. */
  limit: z
    .int()
    .min(1)
    .max(MAX_LIST_LIMIT)
    .default(DEFAULT_LIST_LIMIT)
    .describe('Maximum number of entries to return.'),
});

/** `fs_delete`: delete a file, or a directory tree when `recursive`. */
export const fsDeleteArgsSchema = z.strictObject({
  /** Workspace-relative path to delete. */
  path: workspacePath(),
  /** Required to delete a non-empty directory, so a tree is never removed by accident. */
  recursive: z.boolean().default(false).describe('Delete a directory and everything in it.'),
});

/** The last segment of a workspace path, for default artifact names. */
function baseName(path: string): string {
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  return segments.at(-1) ?? 'artifact';
}

/**
 * What a promotion may say besides its path, shared by `promote_artifact` and the
 * expected outputs of `exec`, so the two promote under the same rules.
 */
const artifactFields = () => ({
  /**
   * Name the user sees; the file's base name when omitted (filled in at parse time,
   * so every layer shows the same name). A plain name, never a path.
   */
  name: z
    .string()
    .min(1)
    .max(MAX_ARTIFACT_NAME_CHARS)
    .regex(/^(?!\.\.?$)[^/\\\0]+$/, { error: 'expected a file name without "/" or "\\"' })
    .describe('Name shown to the user; defaults to the file name.')
    .optional(),
  /** MIME type such as `text/markdown`; guessed from the name when omitted. */
  contentType: z
    .string()
    .max(255)
    .regex(/^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/, {
      error: 'expected a MIME type such as "text/markdown"',
    })
    .describe('MIME type, e.g. "text/markdown".')
    .optional(),
});

/** Fills in the default artifact name: the base name of the path. */
function withArtifactName<T extends { path: string; name?: string | undefined }>(
  args: T,
): T & { name: string } {
  return { ...args, name: args.name ?? baseName(args.path) };
}

/**
 * One expected output of `exec`: a workspace file the command is to leave, promoted as
 * an artifact (as `promote_artifact` would) in the same step that records the
 * command's result, when the command succeeds.
 */
export const expectedOutputSchema = z
  .strictObject({
    /** Workspace-relative file the command writes. */
    path: workspacePath(),
    ...artifactFields(),
  })
  .transform(withArtifactName);

/** An expected output, its name filled in. */
export type ExpectedOutput = z.output<typeof expectedOutputSchema>;

/** `exec`: run a shell command in the sandbox, inside the workspace. */
export const execArgsSchema = z.strictObject({
  /** The command line, run by `/bin/sh -c` after the allowlist check. */
  command: commandLine(),
  /** Time limit; the node's configured default applies when omitted. */
  timeoutMs: timeoutMs(),
  /**
   * Extra environment variables. Names are restricted to portable identifiers so a
   * name cannot smuggle `=` or shell syntax; the node's own secrets are never passed.
   */
  env: commandEnv().describe('Extra environment variables for the command.').optional(),
  /** Text fed to the command's standard input. */
  stdin: z.string().max(MAX_PAYLOAD_CHARS).describe('Standard input for the command.').optional(),
  /** Workspace-relative working directory; the workspace root when omitted. */
  cwd: workspacePath().optional(),
  /**
   * Files the command is expected to leave, promoted as artifacts when it succeeds
   * (exit 0), in the step that records its result. Each one's fate is in the answer's
   * `outputs`: the artifact, or why there is none. A missing one does not fail the
   * command. Paths are workspace paths (not relative to `cwd`), at most one entry each.
   */
  outputs: z
    .array(expectedOutputSchema)
    .min(1)
    .max(MAX_EXPECTED_OUTPUTS)
    .refine((outputs) => new Set(outputs.map((o) => o.path)).size === outputs.length, {
      error: 'each path at most once',
    })
    .describe(
      "Workspace files (paths from the workspace root, not from cwd; each once) to promote as artifacts when the command exits 0: [{path, name?, contentType?}]. The answer's outputs give each one's artifact, or why it is missing; a missing one does not fail the command.",
    )
    .optional(),
});

/**
 * What a queued `exec` command carries to its runner: the call's own fields that say
 * what runs. It is stored with the command row (never audited) and read back from the
 * row through {@link parseExecRequest}, so the type that leaves the contract is the
 * type the runner gets.
 */
export const execRequestSchema = execArgsSchema.pick({
  command: true,
  cwd: true,
  env: true,
  stdin: true,
  outputs: true,
});

/** The request of one queued `exec` command. */
export type ExecRequest = z.output<typeof execRequestSchema>;

/** The request part of parsed `exec` arguments. */
export function execRequestOf(args: ActionArgs<'exec'>): ExecRequest {
  return {
    command: args.command,
    ...(args.cwd !== undefined ? { cwd: args.cwd } : {}),
    ...(args.env ? { env: args.env } : {}),
    ...(args.stdin !== undefined ? { stdin: args.stdin } : {}),
    ...(args.outputs ? { outputs: args.outputs } : {}),
  };
}

/**
 * Reads a command row's stored request back (the queue row boundary). Null when the
 * row holds something that is not an `exec` request, which only a row written by
 * something else can: the caller refuses to run it.
 */
export function parseExecRequest(value: unknown): ExecRequest | null {
  const parsed = execRequestSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** `fetch`: download a URL into a workspace file. */
export const fetchArgsSchema = z.strictObject({
  /**
   * Absolute `http`/`https` URL. Only the syntax is checked here; which hosts may be
   * reached is the workbench's policy (`fetch_blocked`).
   */
  url: z
    .url({ protocol: /^https?$/, error: 'expected an absolute http:// or https:// URL' })
    .max(MAX_URL_CHARS)
    .describe('http or https URL to download.'),
  /** Workspace-relative file the body is written to. */
  path: workspacePath(),
  /** Body size limit in bytes; the node's configured limit applies when omitted. */
  maxBytes: z.int().positive().describe('Maximum body size in bytes.').optional(),
  /** Time limit for the whole download. */
  timeoutMs: timeoutMs(),
});

/** `promote_artifact`: hand a workspace file to the end user as an artifact. */
export const promoteArtifactArgsSchema = z
  .strictObject({
    /** Workspace-relative file to promote. */
    path: workspacePath(),
    ...artifactFields(),
  })
  .transform(withArtifactName);

/**
 * `build`: the deploy pipeline's package build. System-only: refused for any
 * authority but a system one, and absent from the tool definition given to models.
 */
export const buildArgsSchema = z.strictObject({
  /**
   * Git ref (branch, tag or commit) to check out in the workspace's repository before
   * building; the current checkout when omitted. Never starts with `-`, so it cannot be
   * read as an option of git.
   */
  ref: z
    .string()
    .min(1)
    .max(255)
    .regex(/^(?!-)[A-Za-z0-9._/-]+$/, {
      error: 'expected a git ref such as "main" or "v1.2.0" (not starting with "-")',
    })
    .optional(),
  /** npm script to run after `npm ci`; `build` when omitted. Never starts with `-`. */
  script: z
    .string()
    .min(1)
    .max(128)
    .regex(/^(?!-)[A-Za-z0-9:._-]+$/, {
      error: 'expected an npm script name such as "build" (not starting with "-")',
    })
    .optional(),
});

/** Every action, in the order they are documented. */
export const ACTION_NAMES = [
  'fs_write',
  'fs_read',
  'fs_list',
  'fs_delete',
  'exec',
  'fetch',
  'promote_artifact',
  'process_start',
  'process_list',
  'process_output',
  'process_write',
  'process_signal',
  'process_wait',
  'process_resize',
  'process_shell',
  'version_list',
  'version_diff',
  'version_checkpoint',
  'version_restore',
  'build',
] as const;

/** The name of an action. */
export type ActionName = (typeof ACTION_NAMES)[number];

/** Actions only a system-class authority may call; never offered to models. */
export const SYSTEM_ONLY_ACTIONS = [
  'build',
  'process_shell',
] as const satisfies readonly ActionName[];

/** An action only a system-class authority may call. */
export type SystemOnlyActionName = (typeof SYSTEM_ONLY_ACTIONS)[number];

/** An action offered to models. */
export type ToolActionName = Exclude<ActionName, SystemOnlyActionName>;

/** Whether `name` is open to tool loops (not system-only). */
export function isToolActionName(name: ActionName): name is ToolActionName {
  return !(SYSTEM_ONLY_ACTIONS as readonly ActionName[]).includes(name);
}

/** The actions offered to models in the tool definition, in documented order. */
export const TOOL_ACTION_NAMES: readonly ToolActionName[] = ACTION_NAMES.filter(isToolActionName);

/** The schema of each action's `args`. */
export const ACTION_SCHEMAS = {
  fs_write: fsWriteArgsSchema,
  fs_read: fsReadArgsSchema,
  fs_list: fsListArgsSchema,
  fs_delete: fsDeleteArgsSchema,
  exec: execArgsSchema,
  fetch: fetchArgsSchema,
  promote_artifact: promoteArtifactArgsSchema,
  process_start: processStartArgsSchema,
  process_list: processListArgsSchema,
  process_output: processOutputArgsSchema,
  process_write: processWriteArgsSchema,
  process_signal: processSignalArgsSchema,
  process_wait: processWaitArgsSchema,
  process_resize: processResizeArgsSchema,
  process_shell: processShellArgsSchema,
  version_list: versionListArgsSchema,
  version_diff: versionDiffArgsSchema,
  version_checkpoint: versionCheckpointArgsSchema,
  version_restore: versionRestoreArgsSchema,
  build: buildArgsSchema,
} as const satisfies Record<ActionName, z.ZodType>;

/** The parsed `args` of action `A`, with defaults applied. */
export type ActionArgs<A extends ActionName> = z.output<(typeof ACTION_SCHEMAS)[A]>;

/** The `args` of action `A` as a caller may write them (defaults optional). */
export type ActionArgsInput<A extends ActionName> = z.input<(typeof ACTION_SCHEMAS)[A]>;

/** Whether `value` names an action. */
export function isActionName(value: unknown): value is ActionName {
  return typeof value === 'string' && (ACTION_NAMES as readonly string[]).includes(value);
}

const MUTATING_ACTIONS: ReadonlySet<ActionName> = new Set([
  'fs_write',
  'fs_delete',
  'exec',
  'fetch',
  'process_start',
  'version_restore',
]);

/**
 * Whether a tool-loop action may change the workspace's files, so the workbench must
 * sync the workspace to durable storage after it. `fs_read`, `fs_list` and
 * `promote_artifact` only read it. `build` is not counted: it is system-only and its
 * own pipeline decides what it keeps.
 */
export function isMutatingAction(name: ActionName): boolean {
  return MUTATING_ACTIONS.has(name);
}
