/**
 * The `workbenchHost` tool definition handed to models for function calling.
 *
 * Generated from the action schemas, so the model is told exactly what the envelope
 * parser accepts. The shape is a flat object (`action` enum, `args`, `environment`)
 * because function-calling APIs require the top level to be `type: "object"` and
 * handle a top-level `oneOf` poorly; the per-action shapes sit in `args.anyOf`, each
 * titled with its action. The system-only `build` action is left out: a model is
 * never offered it, and naming it anyway is refused before the call leaves the agent.
 *
 * @module
 */

import { z } from 'zod';
import {
  ACTION_SCHEMAS,
  type ActionName,
  TOOL_ACTION_NAMES,
  type ToolActionName,
} from './actions.js';
import { environmentHintSchema } from './environment.js';
import { EXEC_PROGRAMS_SUMMARY } from './exec-programs.js';

/** The tool's name, as models call it. */
export const WORKBENCH_TOOL_NAME = 'workbenchHost';

/** A JSON Schema document, as plain JSON data. */
export type JsonSchema = { [key: string]: unknown };

/** A function-calling tool definition. */
export interface ToolDefinition {
  /** The name the model calls. */
  readonly name: string;
  /** When and how to use the tool, for the model. */
  readonly description: string;
  /** JSON Schema of the call's arguments; always `type: "object"` at the top. */
  readonly parameters: JsonSchema;
}

/** What each tool-loop action does, for the model. */
const ACTION_DESCRIPTIONS: Record<ToolActionName, string> = {
  fs_write: 'Create, replace or append to a file.',
  fs_read: 'Read a file, or a byte range of it.',
  fs_list: 'List a directory, optionally recursively.',
  fs_delete: 'Delete a file, or a directory tree with recursive=true.',
  exec:
    'Run an allowlisted shell command in the workspace (no network unless the run is given hosts; hosts refused come back in egress.refused). ' +
    EXEC_PROGRAMS_SUMMARY,
  fetch: 'Download an http(s) URL into a workspace file.',
  promote_artifact: 'Hand a workspace file to the user as a downloadable artifact.',
  process_start:
    'Start a background process (a server, a watcher, a long build) that outlives this call; answers at once with its processId. Same allowlist as exec.',
  process_list: "List the run's background processes, newest first.",
  process_output:
    "Read a process's stdout or stderr from a byte offset (0, then the answer's next); complete: true once it ended and all was read.",
  process_write: "Write text to a running process's standard input; eof: true closes it.",
  process_signal: "Send a signal (default SIGTERM) to a running process's process group.",
  process_wait: 'Wait up to timeoutMs for a process to end; the answer says whether it has.',
  process_resize: "Resize a running process's terminal (one started with pty).",
  version_list:
    "List the workspace's versions, newest first: every change of its files is one (each file action, command and restore), with what made it.",
  version_diff:
    'Compare two versions: the paths added, changed and removed, with sizes and hashes.',
  version_checkpoint:
    'Label a version (the current one by default) to keep it and restore it by name; remove: true takes the label off.',
  version_restore:
    'Put the workspace back to a version (by number or label) as a new version; the later versions stay listed, so a restore can be undone.',
};

const TOOL_DESCRIPTION =
  'A sandboxed Linux workspace for this run: files persist across calls within the run. ' +
  'Use it first for any headless work that needs files, a shell or a download. ' +
  'Choose an action and pass its arguments in args. Every path is relative to the ' +
  'workspace root; absolute paths and ".." are rejected. If the work needs a display, ' +
  "a GPU, macOS tooling or files on the user's computer, say so in environment: the " +
  "workbench does not run it, and it goes to one of the user's own worker hosts when " +
  'the user has consented (consent_required: a request waits for the user, who alone ' +
  'approves it, in the console; ask them, then repeat the call. kill_switch_engaged means ' +
  'they turned it off, which also stops calls running there; worker_unavailable means ' +
  'none of their machines provides it).';

/** JSON Schema of one zod schema as callers write it (defaults optional), without `$schema`. */
function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
  return rest;
}

/**
 * The JSON Schema of one action's `args`, as it appears in the tool definition.
 * Exposed so tests and documentation can look at one action without the wrapper.
 */
export function actionArgsJsonSchema(action: ActionName): JsonSchema {
  return inputJsonSchema(ACTION_SCHEMAS[action]);
}

/** The JSON Schema of the environment hint `{ os?, needs? }`, as callers write it. */
export function environmentHintJsonSchema(): JsonSchema {
  return inputJsonSchema(environmentHintSchema);
}

/**
 * Build the `workbenchHost` tool definition. A fresh object on every call, so a
 * caller that adjusts it (adds a provider-specific flag) cannot affect another.
 */
export function workbenchToolDefinition(): ToolDefinition {
  const actions = TOOL_ACTION_NAMES;
  const argsBranches = actions.map((action) => ({
    title: action,
    description: `args when action is "${action}": ${ACTION_DESCRIPTIONS[action]}`,
    ...actionArgsJsonSchema(action),
  }));
  return {
    name: WORKBENCH_TOOL_NAME,
    description: TOOL_DESCRIPTION,
    parameters: {
      type: 'object',
      properties: {
        action: {
          type: 'string',
          enum: actions,
          description: actions.map((a) => `${a}: ${ACTION_DESCRIPTIONS[a]}`).join(' '),
        },
        args: {
          description: 'The arguments of the chosen action; use the shape titled with its name.',
          anyOf: argsBranches,
        },
        environment: environmentHintJsonSchema(),
      },
      required: ['action', 'args'],
      additionalProperties: false,
    },
  };
}
