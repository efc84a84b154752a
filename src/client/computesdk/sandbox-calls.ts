/**
 * What a ComputeSDK sandbox of this provider is (a run, and the client that reaches
 * it), the provider's configuration, and the one way its methods call an action.
 *
 * @module
 */

import type { DispatchResult, TerminalRunStatus, ToolActionName } from '../../contract/index.js';
import { ClientError } from '../client-error.js';
import type { DispatchStreamOptions } from '../client-options.js';
import type { Run } from '../types.js';
import { WorkbenchClient } from '../workbench-client.js';
import { refusal } from './command-result.js';

/** How the provider reaches an agent node: `memqlWorkbench({ baseUrl, token })`. */
export interface MemqlWorkbenchConfig {
  /** The agent node's API address, as `npm start` prints it (`http://127.0.0.1:8080`). */
  readonly baseUrl: string;
  /** An agent token (`mqt_…`): the runs are this token's user's. */
  readonly token: string;
  /** The `agentId` recorded on every call (audit events, logs); default `computesdk`. */
  readonly agentId?: string;
  /** The `taskId` recorded on every call; default `computesdk`. */
  readonly taskId?: string;
  /** The status `destroy` ends a run with before deleting it; default `succeeded`. */
  readonly endStatus?: TerminalRunStatus;
  /** The `fetch` the client uses; the global one by default. */
  readonly fetch?: typeof fetch;
}

/** A sandbox of this provider: one run, and the client that reaches it. */
export interface WorkbenchSandbox {
  /** The client of the agent node's API, shared by the provider's sandboxes. */
  readonly client: WorkbenchClient;
  /** The run as it was read when the sandbox was made (`getInfo` reads it again). */
  readonly run: Run;
  readonly agentId: string;
  readonly taskId: string;
}

/** One client per configuration object: the provider's calls share its connections. */
const clients = new WeakMap<MemqlWorkbenchConfig, WorkbenchClient>();

/**
 * The client for `config`, made on first use. A configuration without an address or
 * a token is `invalid_arguments`, saying where each comes from.
 */
export function clientFor(config: MemqlWorkbenchConfig): WorkbenchClient {
  const known = clients.get(config);
  if (known) return known;
  for (const key of ['baseUrl', 'token'] as const) {
    if (typeof config?.[key] !== 'string' || config[key] === '') {
      throw new ClientError(
        'invalid_arguments',
        `invalid_arguments: memqlWorkbench needs ${key}: the agent node's API address and an agent token, both printed by npm start (memqlWorkbench({ baseUrl: 'http://127.0.0.1:8080', token: 'mqt_…' }))`,
      );
    }
  }
  const client = new WorkbenchClient({
    baseUrl: config.baseUrl,
    token: config.token,
    ...(config.fetch ? { fetch: config.fetch } : {}),
  });
  clients.set(config, client);
  return client;
}

/** The sandbox of `run`, reached through `config`'s client. */
export function sandboxOf(config: MemqlWorkbenchConfig, run: Run): WorkbenchSandbox {
  return {
    client: clientFor(config),
    run,
    agentId: config.agentId ?? 'computesdk',
    taskId: config.taskId ?? 'computesdk',
  };
}

/** The dispatch request of one action in the sandbox's run. */
function request(sandbox: WorkbenchSandbox, action: ToolActionName, args: object) {
  return {
    action,
    args: args as Record<string, unknown>,
    runId: sandbox.run.id,
    agentId: sandbox.agentId,
    taskId: sandbox.taskId,
  };
}

/** The payload of a successful result; a refusal thrown as a `ClientError` with its code. */
function payloadOf<T>(result: DispatchResult): T {
  if (!result.ok) throw refusal(result);
  return result.payload as T;
}

/** Runs one action in the sandbox's run and answers its payload, or throws its refusal. */
export async function call<T>(
  sandbox: WorkbenchSandbox,
  action: ToolActionName,
  args: object,
): Promise<T> {
  return payloadOf<T>(await sandbox.client.dispatch(request(sandbox, action, args)));
}

/** As {@link call}, with a command's output passed to `options.onOutput` as it comes. */
export async function callStreamed<T>(
  sandbox: WorkbenchSandbox,
  action: ToolActionName,
  args: object,
  options: DispatchStreamOptions,
): Promise<T> {
  return payloadOf<T>(await sandbox.client.dispatchStream(request(sandbox, action, args), options));
}
