/**
 * The MCP tools: one per workbench action a model may call (the `workbenchHost`
 * actions, `build` never among them), and `open_run` / `end_run` / `list_runs` /
 * `set_run_network` / `fork_run` around them. Each action tool takes the action's own arguments plus the run it works in, so
 * its input schema is the action's schema from the contract with `runId` (and the
 * optional `environment` hint) added: the same schema the envelope parser holds the call
 * to, so a model is told exactly what is accepted.
 *
 * @module
 */

import {
  actionArgsJsonSchema,
  EXEC_PROGRAMS_SUMMARY,
  environmentHintJsonSchema,
  type JsonSchema,
  MAX_HOST_RULES,
  MAX_ID_CHARS,
  MAX_RUN_SECRETS,
  SECRET_NAME_PATTERN,
  TERMINAL_RUN_STATUSES,
  TOOL_ACTION_NAMES,
  type ToolActionName,
  VERSION_LABEL_PATTERN,
} from '../contract/index.js';

/** What each action tool does, for the model. */
const ACTION_TOOL_DESCRIPTIONS: Record<ToolActionName, string> = {
  fs_write: 'Create, replace or append to a file in the run workspace.',
  fs_read:
    'Read a file of the run workspace, or a byte range of it. Binary files come back as base64 with encoding "base64".',
  fs_list: 'List a directory of the run workspace, optionally recursively.',
  fs_delete: 'Delete a file, or a directory tree with recursive=true.',
  exec:
    'Run an allowlisted shell command in the run workspace, in a sandbox with no network unless the run is given hosts (set_run_network); hosts the proxy refused come back in egress.refused. ' +
    'Files the command writes persist in the run. Live output is sent as progress notifications when the call carries a progress token. ' +
    EXEC_PROGRAMS_SUMMARY,
  fetch: 'Download an http(s) URL into a file of the run workspace.',
  promote_artifact:
    'Hand a workspace file to the user as a downloadable artifact (listed as an MCP resource).',
  process_start:
    'Start a background process in the run workspace (a dev server, a watcher, a long build or training) that outlives this call: it answers at once with a processId. Same allowlist and sandbox as exec. Read its output with process_output, stop it with process_signal.',
  process_list: "List the run's background processes, newest first, with their status.",
  process_output:
    "Read a background process's stdout or stderr from a byte offset: start at 0, then pass the answer's next. complete: true once it ended and everything was read.",
  process_write:
    "Write text to a running background process's standard input; eof: true closes it.",
  process_signal:
    "Send a signal (default SIGTERM) to a running background process's process group.",
  process_wait:
    'Wait up to timeoutMs for a background process to end; the answer gives its status either way.',
  process_resize:
    "Resize a running background process's terminal (one started with pty); it gets SIGWINCH.",
  version_list:
    "List the run workspace's versions, newest first: every change of its files (each file action, command and restore) is one, with what made it and how many paths it added, changed and removed.",
  version_diff:
    'Compare two versions of the run workspace: the paths added, changed and removed between them, with sizes and hashes.',
  version_checkpoint:
    'Label a version of the run workspace (the current one by default) so it is kept and can be restored by name; remove: true takes the label off.',
  version_restore:
    'Put the run workspace back to an earlier version (by number or label). The restore is a new version: the versions after the restored one stay listed, so it can be undone by restoring again.',
};

/** The tools that are not workbench actions. */
export const RUN_TOOL_NAMES = [
  'open_run',
  'end_run',
  'list_runs',
  'set_run_network',
  'fork_run',
] as const;

/** One tool as `tools/list` answers it. */
export interface McpToolListing {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema & { type: 'object' };
  readonly annotations?: Record<string, boolean>;
}

const runIdSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ID_CHARS,
  description: 'The run whose workspace the call works in (from open_run).',
};

const environmentSchema = {
  ...environmentHintJsonSchema(),
  description:
    'Optional environment hint {os?, needs?}. Work that needs a display, a GPU, macOS tooling or the ' +
    "user's files never runs on the workbench: it goes to one of the user's worker hosts when they " +
    'have consented (consent_required, kill_switch_engaged and worker_unavailable say why not). ' +
    'Only the user approves consent, in the console: ask them; no tool here can.',
};

const callIdSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ID_CHARS,
  description:
    'Optional idempotency key of this call. Without one every tool call is a new call. To learn ' +
    'the outcome of a call whose answer you lost, repeat it exactly with the callId you gave it; ' +
    'a callId already used for a different call is refused (call_id_conflict).',
};

const allowSchema = {
  type: 'array',
  maxItems: MAX_HOST_RULES,
  items: { type: 'string', minLength: 1, maxLength: 260 },
  description:
    'Host names its commands may reach: exact (pypi.org), a wildcard for the names below a suffix (*.pythonhosted.org), either with an optional :port (github.com:443). Names, never IP addresses. [] is no network.',
};

const secretsSchema = {
  type: 'array',
  maxItems: MAX_RUN_SECRETS,
  items: { type: 'string', pattern: SECRET_NAME_PATTERN.source },
  description:
    "Names of the operator's secrets to use (a token for a private index or git host): the proxy adds each to requests to its own hosts; its value never enters the sandbox. Optional.",
};

/** `network` of `open_run`: the run's hosts and secrets. */
const networkSchema = {
  type: 'object',
  properties: { allow: allowSchema, secrets: secretsSchema },
  required: ['allow'],
  additionalProperties: false,
  description:
    "Optional: what the run's commands may reach on the network (pip, npm, git and curl go through a proxy that allows these hosts only). Without it, commands have no network. Only hosts within the operator's ceiling are accepted (egress_not_allowed lists it).",
};

/**
 * How a model that was refused a host learns to ask: `egress.refused` in an exec
 * result, or a proxy refusal in pip's or git's output, names the host. Within the
 * operator's ceiling only: the ceiling, not this tool, is the guard.
 */
const SET_RUN_NETWORK_DESCRIPTION =
  "Replace the hosts a run's commands may reach on the network, and the operator secrets it uses. " +
  'Commands have no network unless their run is given hosts. When a command fails because a host was refused ' +
  '(the exec result lists egress.refused, or pip, npm, git or curl reports the proxy refusing a host), call this ' +
  'with every host the work needs, keeping the ones the run already has (it replaces the list): for pip ' +
  'pypi.org and files.pythonhosted.org, for npm registry.npmjs.org. Running commands use it from their next ' +
  "connection; no restart. Only hosts within the operator's ceiling can be given: egress_not_allowed names the " +
  'hosts refused and what the ceiling allows; for anything beyond it, tell the user what you need.';

/** Whether an action only reads the workspace. */
const READ_ONLY: ReadonlySet<ToolActionName> = new Set([
  'fs_read',
  'fs_list',
  'process_list',
  'process_output',
  'process_wait',
  'version_list',
  'version_diff',
]);

/** The input schema of an action tool: the action's arguments, `runId` and `environment`. */
export function actionToolInputSchema(action: ToolActionName): JsonSchema & { type: 'object' } {
  const args = actionArgsJsonSchema(action);
  const properties = (args.properties ?? {}) as Record<string, unknown>;
  const required = (args.required ?? []) as string[];
  return {
    type: 'object',
    properties: {
      runId: runIdSchema,
      ...properties,
      environment: environmentSchema,
      callId: callIdSchema,
    },
    required: ['runId', ...required],
    additionalProperties: false,
  };
}

/** Every tool, in the order `tools/list` gives them. */
export function mcpTools(): McpToolListing[] {
  const runTools: McpToolListing[] = [
    {
      name: 'open_run',
      title: 'Open a run',
      description:
        'Create a run: a sandboxed Linux workspace whose files persist across calls until the run ends. ' +
        'Returns its runId, which every other tool takes. Its commands have no network unless network.allow names hosts ' +
        '(set_run_network changes them later).',
      inputSchema: {
        type: 'object',
        properties: {
          conversationId: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_ID_CHARS,
            description: 'Your conversation id, recorded on the run.',
          },
          retentionMs: {
            type: 'integer',
            minimum: 1,
            description: 'How long the run data is kept, in milliseconds.',
          },
          network: networkSchema,
        },
        additionalProperties: false,
      },
    },
    {
      name: 'end_run',
      title: 'End a run',
      description:
        'End a run with a terminal status; its workspace is released. Files and artifacts stay readable until the run is deleted.',
      inputSchema: {
        type: 'object',
        properties: {
          runId: runIdSchema,
          status: { type: 'string', enum: [...TERMINAL_RUN_STATUSES] },
        },
        required: ['runId', 'status'],
        additionalProperties: false,
      },
      annotations: { destructiveHint: false, idempotentHint: true },
    },
    {
      name: 'list_runs',
      title: 'List runs',
      description: 'List your runs, newest first.',
      inputSchema: {
        type: 'object',
        properties: {
          status: {
            type: 'string',
            description: 'Only runs with this status ("running" or a terminal status).',
          },
          limit: { type: 'integer', minimum: 1, maximum: 1000 },
        },
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'set_run_network',
      title: "Set a run's network",
      description: SET_RUN_NETWORK_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: { runId: runIdSchema, allow: allowSchema, secrets: secretsSchema },
        required: ['runId', 'allow'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
    },
    {
      name: 'fork_run',
      title: 'Fork a run',
      description:
        "Open a new run whose workspace starts as a version of another run's (the current one unless version or label names another): to try a second approach from the same state. No file is copied; the two runs go their own ways from there. Returns the new runId.",
      inputSchema: {
        type: 'object',
        properties: {
          runId: { ...runIdSchema, description: 'The run to fork.' },
          version: {
            type: 'integer',
            minimum: 1,
            description: 'The version to start from (version_list); the current one by default.',
          },
          label: {
            type: 'string',
            pattern: VERSION_LABEL_PATTERN.source,
            description: 'Or the checkpoint label of the version to start from.',
          },
          conversationId: {
            type: 'string',
            minLength: 1,
            maxLength: MAX_ID_CHARS,
            description: "The new run's conversation id; the forked run's by default.",
          },
        },
        required: ['runId'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false },
    },
  ];
  const actionTools = TOOL_ACTION_NAMES.map(
    (action): McpToolListing => ({
      name: action,
      title: action,
      description: ACTION_TOOL_DESCRIPTIONS[action],
      inputSchema: actionToolInputSchema(action),
      annotations: READ_ONLY.has(action)
        ? { readOnlyHint: true }
        : { readOnlyHint: false, openWorldHint: action === 'fetch' },
    }),
  );
  return [...runTools, ...actionTools];
}
