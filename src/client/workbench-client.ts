/**
 * `WorkbenchClient`: typed access to an agent node's HTTP API, for tool loops, the
 * `memql` CLI and tests. One method per route; every method throws a
 * {@link ClientError} with a stable `code` when the call fails, except that a
 * dispatch the server answered is returned as a `DispatchResult` (a refused call is
 * ordinary data for a tool loop).
 *
 * No I/O happens at construction, and the `fetch` used is injectable.
 *
 * @module
 */

import type { DispatchResult, RunNetworkRequest, TokenKind } from '../contract/index.js';
import type { ArtifactBody, DownloadResult } from './artifact-download.js';
import type {
  BuildRequest,
  DispatchStreamOptions,
  DownloadOptions,
  FileCallOptions,
  WorkbenchClientOptions,
  WorkbenchHostFn,
} from './client-options.js';
import { ClientTransport, enc, field, pageSearch } from './client-transport.js';
import { dispatchOnce, dispatchStreamed, toolFunction } from './dispatch-calls.js';
import {
  downloadArtifact,
  downloadFile,
  openArtifact,
  openFile,
  uploadFile,
} from './file-transfer.js';
import { ProcessClient } from './process-client.js';
import type {
  ArtifactRecord,
  CancelAnswer,
  CommandPage,
  CommandRecord,
  CreateRunOptions,
  DeletedCounts,
  DispatchRequest,
  EndRunAnswer,
  FleetView,
  FsWritePayload,
  ListCommandsOptions,
  ListRunsOptions,
  ListWorkspacesOptions,
  MeAnswer,
  Run,
  RunPage,
  TerminalRunStatus,
  TokenCreatedAnswer,
  TokenRecord,
  TokenRevokedAnswer,
  WorkspacePage,
  WorkspaceRecord,
} from './types.js';
import { VersionClient } from './version-client.js';
import { WorkerClient } from './worker-client.js';

/** A typed client of the agent node's HTTP API. */
export class WorkbenchClient {
  readonly baseUrl: string;
  private readonly http: ClientTransport;
  /** A run's background processes (`/v1/runs/:runId/processes`). */
  readonly processes: ProcessClient;
  /** A run's workspace history: versions, diffs, checkpoints, restore, fork. */
  readonly versions: VersionClient;
  /** The caller's worker hosts, their consent and kill switch, and where calls went. */
  readonly workers: WorkerClient;

  constructor(options: WorkbenchClientOptions) {
    this.http = new ClientTransport(options);
    this.baseUrl = this.http.baseUrl;
    this.processes = new ProcessClient(this.http);
    this.versions = new VersionClient(this.http);
    this.workers = new WorkerClient(this.http);
  }

  /** Create a run owned by the token's user. */
  async createRun(options: CreateRunOptions = {}): Promise<Run> {
    const body = await this.http.json('POST', '/v1/runs', { body: options });
    return field<Run>(body, 'run');
  }

  /**
   * One page of the caller's runs, newest first (only the caller's own). Page on with
   * `before: page.nextBefore` until it is null.
   */
  async listRuns(options: ListRunsOptions = {}): Promise<RunPage> {
    const body = await this.http.json('GET', `/v1/runs${pageSearch(options)}`);
    return {
      runs: field<Run[]>(body, 'runs'),
      nextBefore: field<string | null>(body, 'nextBefore'),
    };
  }

  /**
   * Makes an API token for `userId` (operator credential only): the record and the
   * secret, which is shown this once. `kind` `agent` (default) for a tool loop,
   * `person` for the user's own sign-in (the console, the CLI in their shell).
   */
  async createToken(
    userId: string,
    options: { label?: string; kind?: TokenKind } = {},
  ): Promise<TokenCreatedAnswer> {
    const body = await this.http.json('POST', '/v1/admin/tokens', { body: { userId, ...options } });
    return { token: field<TokenRecord>(body, 'token'), secret: field<string>(body, 'secret') };
  }

  /** The users' tokens, newest first, without secrets (operator credential only). */
  async listTokens(options: { userId?: string } = {}): Promise<readonly TokenRecord[]> {
    const query = options.userId === undefined ? '' : `?userId=${enc(options.userId, 'userId')}`;
    return field<TokenRecord[]>(await this.http.json('GET', `/v1/admin/tokens${query}`), 'tokens');
  }

  /** Revokes a token by id (operator credential only); `revoked` false when it already was. */
  async revokeToken(tokenId: string): Promise<TokenRevokedAnswer> {
    const body = await this.http.json('DELETE', `/v1/admin/tokens/${enc(tokenId, 'tokenId')}`);
    return { token: field<TokenRecord>(body, 'token'), revoked: field<boolean>(body, 'revoked') };
  }

  /** Read one of the caller's runs (`not_found` for anyone else's). */
  async getRun(runId: string): Promise<Run> {
    return field<Run>(await this.http.json('GET', `/v1/runs/${enc(runId, 'runId')}`), 'run');
  }

  /**
   * Replace a run's network (`{allow: []}` takes it away); its commands' next
   * connections follow it. Outside the operator's ceiling, or naming a secret the
   * operator did not define: `egress_not_allowed` (403), its payload saying what the
   * ceiling allows, and nothing changes. An agent token may: the ceiling is the guard.
   */
  async setRunNetwork(runId: string, network: RunNetworkRequest): Promise<Run> {
    const path = `/v1/runs/${enc(runId, 'runId')}/network`;
    return field<Run>(await this.http.json('PUT', path, { body: network }), 'run');
  }

  /** Move a run to a terminal status; its workspace is released. */
  async endRun(runId: string, status: TerminalRunStatus): Promise<EndRunAnswer> {
    const body = await this.http.json('POST', `/v1/runs/${enc(runId, 'runId')}/end`, {
      body: { status },
    });
    return {
      run: field<Run>(body, 'run'),
      released: (body as Partial<EndRunAnswer>).released === true,
    };
  }

  /** Delete a run and everything it left: objects, command rows, workspaces, artifacts. */
  async deleteRun(runId: string): Promise<DeletedCounts> {
    return field<DeletedCounts>(
      await this.http.json('DELETE', `/v1/runs/${enc(runId, 'runId')}`),
      'deleted',
    );
  }

  /**
   * Dispatch one `workbenchHost` call and wait for its result. Aborting `signal` stops
   * the wait; a command the call queued goes on unless `cancelOnDisconnect` is set.
   */
  async dispatch(
    request: DispatchRequest,
    options: { signal?: AbortSignal; cancelOnDisconnect?: boolean } = {},
  ): Promise<DispatchResult> {
    return dispatchOnce(this.http, request, options);
  }

  /**
   * Dispatch with live output: `onOutput` sees an `exec` command's output as it is
   * produced, and the result arrives at the end. Aborting `signal` closes the
   * connection and the promise rejects with the abort; the command goes on unless
   * `cancelOnDisconnect` is set.
   */
  async dispatchStream(
    request: DispatchRequest,
    options: DispatchStreamOptions = {},
  ): Promise<DispatchResult> {
    return dispatchStreamed(this.http, '/v1/dispatch/stream', request, options);
  }

  /**
   * A package build in run `runId` (operator credential only; a user token is refused
   * with `build_not_permitted`): checks out `ref` when given, runs `npm ci` and the npm
   * script `script` (default `build`) on a replica that can build. Live output as for
   * {@link dispatchStream}; the result is shaped like an `exec` result.
   */
  async build(
    runId: string,
    request: BuildRequest = {},
    options: DispatchStreamOptions = {},
  ): Promise<DispatchResult> {
    const route = `/v1/admin/runs/${enc(runId, 'runId')}/build/stream`;
    return dispatchStreamed(this.http, route, request, options);
  }

  /**
   * Cancel a command: a queued one ends now, a running one is killed by its worker.
   * `effect` says which (`ended`: it had ended already).
   */
  async cancelCommand(commandId: string): Promise<CancelAnswer> {
    const path = `/v1/commands/${enc(commandId, 'commandId')}/cancel`;
    const body = await this.http.json('POST', path, { body: {} });
    return { command: field<CommandRecord>(body, 'command'), effect: field(body, 'effect') };
  }

  /** Cancel the command a call with key `callId` queued in run `runId`. */
  async cancelCall(runId: string, callId: string): Promise<CancelAnswer> {
    const path = `/v1/runs/${enc(runId, 'runId')}/calls/${enc(callId, 'callId')}/cancel`;
    const body = await this.http.json('POST', path, { body: {} });
    return { command: field<CommandRecord>(body, 'command'), effect: field(body, 'effect') };
  }

  /** Read a command's status and output by id (e.g. after a lost connection). */
  async getCommand(commandId: string): Promise<CommandRecord> {
    const body = await this.http.json('GET', `/v1/commands/${enc(commandId, 'commandId')}`);
    return field<CommandRecord>(body, 'command');
  }

  /**
   * Read the command the call with key `callId` queued in run `runId`, whole: how a
   * caller cut off before its answer finds the command by the key it chose.
   */
  async getCallCommand(runId: string, callId: string): Promise<CommandRecord> {
    const path = `/v1/runs/${enc(runId, 'runId')}/calls/${enc(callId, 'callId')}`;
    const body = await this.http.json('GET', path);
    return field<CommandRecord>(body, 'command');
  }

  /**
   * One page of a run's commands, newest first, without their output: how a caller
   * finds a command whose call was cut off before it learned the id. Page on with
   * `before: page.nextBefore` until it is null.
   */
  async listCommands(runId: string, options: ListCommandsOptions = {}): Promise<CommandPage> {
    const body = await this.http.json(
      'GET',
      `/v1/runs/${enc(runId, 'runId')}/commands${pageSearch(options)}`,
    );
    return {
      commands: field<CommandPage['commands']>(body, 'commands'),
      nextBefore: field<string | null>(body, 'nextBefore'),
    };
  }

  /** The caller's workspaces, the newest page of them; released ones too when `includeReleased`. */
  async listWorkspaces(
    options: { includeReleased?: boolean } = {},
  ): Promise<readonly WorkspaceRecord[]> {
    return (await this.listWorkspacePage(options)).workspaces;
  }

  /**
   * One page of the caller's workspaces, newest first. Page on with
   * `before: page.nextBefore` until it is null.
   */
  async listWorkspacePage(options: ListWorkspacesOptions = {}): Promise<WorkspacePage> {
    const search = new URLSearchParams(pageSearch(options).slice(1));
    if (options.includeReleased) search.set('includeReleased', 'true');
    const body = await this.http.json(
      'GET',
      `/v1/workspaces${search.size > 0 ? `?${search}` : ''}`,
    );
    return {
      workspaces: field<WorkspaceRecord[]>(body, 'workspaces'),
      nextBefore: field<string | null>(body, 'nextBefore'),
    };
  }

  /** The caller's promoted artifacts, of one run when `runId` is given. */
  async listArtifacts(options: { runId?: string } = {}): Promise<readonly ArtifactRecord[]> {
    const query = options.runId === undefined ? '' : `?runId=${enc(options.runId, 'runId')}`;
    const body = await this.http.json('GET', `/v1/artifacts${query}`);
    return field<ArtifactRecord[]>(body, 'artifacts');
  }

  /** One of the caller's artifacts, by id. */
  async getArtifact(artifactId: string): Promise<ArtifactRecord> {
    const body = await this.http.json('GET', `/v1/artifacts/${enc(artifactId, 'artifactId')}`);
    return field<ArtifactRecord>(body, 'artifact');
  }

  /** Open an artifact's bytes as a stream; read `body` once. */
  async openArtifact(
    artifactId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<ArtifactBody> {
    return openArtifact(this.http, artifactId, options);
  }

  /**
   * Download an artifact to a file or stream without buffering it, with progress.
   * A body shorter or longer than its `Content-Length` is `unavailable` (and a
   * partial file is removed).
   */
  async downloadArtifact(artifactId: string, options: DownloadOptions): Promise<DownloadResult> {
    return downloadArtifact(this.http, artifactId, options);
  }

  /**
   * Write a workspace file from bytes or a stream (a file's read stream, stdin),
   * never held whole: `PUT /v1/runs/:runId/files`. The file appears at `path` whole,
   * once every byte is durable, or not at all; files up to 4 GiB
   * (`MAX_UPLOAD_BYTES`) and the workspace's quota.
   */
  async uploadFile(
    runId: string,
    path: string,
    source: Uint8Array | AsyncIterable<Uint8Array>,
    options: FileCallOptions & { readonly mode?: string } = {},
  ): Promise<FsWritePayload> {
    return uploadFile(this.http, runId, path, source, options);
  }

  /** Open a workspace file's bytes as a stream (`GET /v1/runs/:runId/files`); read `body` once. */
  async openFile(
    runId: string,
    path: string,
    options: FileCallOptions = {},
  ): Promise<ArtifactBody> {
    return openFile(this.http, runId, path, options);
  }

  /**
   * Download a workspace file of any size to a file or stream without buffering it.
   * A body shorter than its `Content-Length` (the file changed while it was read, or
   * the connection broke) is `unavailable`, and a partial file is removed.
   */
  async downloadFile(
    runId: string,
    path: string,
    options: DownloadOptions,
  ): Promise<DownloadResult> {
    return downloadFile(this.http, runId, path, options);
  }

  /** The workbench replicas this agent node knows, and its dispatch mode. */
  async fleet(): Promise<FleetView> {
    return (await this.http.json('GET', '/v1/fleet/workbenches')) as FleetView;
  }

  /** The node's health answer (no token needed). */
  async health(): Promise<unknown> {
    return this.http.json('GET', '/healthz');
  }

  /**
   * The one tool of a tool loop, bound to a run: `(action, args) => DispatchResult`.
   * Pass the model's tool-call id as `callId` so logs and audit events name it.
   * Refusals the model can fix (`invalid_arguments`, `payload_too_large`) come back
   * as failed results even when the HTTP layer refused them; a bad token or an
   * unreachable node throws, since no model turn can fix those.
   */
  workbenchHost(
    runId: string,
    agentId: string,
    options: { readonly taskId?: string } = {},
  ): WorkbenchHostFn {
    const taskId = options.taskId ?? 'tool-loop';
    return toolFunction((request) => this.dispatch(request), runId, agentId, taskId);
  }

  /** Who the token speaks for: its user and its kind (`agent` or `person`). */
  async me(): Promise<MeAnswer> {
    return (await this.http.json('GET', '/v1/me')) as MeAnswer;
  }
}
