/**
 * What `memql` prints: the usage text, human tables, the exit code of an `exec`, and
 * the hint shown under an error. Pure functions of data.
 */
import { constants } from 'node:os';
import type {
  ArtifactRecord,
  CommandPage,
  ExecPayload,
  ExpectedOutputResult,
  FleetView,
  FsListPayload,
  Run,
  RunPage,
  TokenRecord,
  WorkspaceRecord,
} from '../../src/client/index.js';
import { table } from './cli-table.js';
import { workerRows } from './worker-output.js';

export { table } from './cli-table.js';

/** The `memql --help` text. */
export const USAGE = `memql: drive memql-workbench runs from a shell

usage: memql [--url URL] [--token TOKEN] [--json] <command> [arguments]

runs
  memql runs create [--conversation ID] [--retention-ms MS] [--allow HOST[,HOST...]]... [--secret NAME]...
      prints the new run id. --allow: hosts its commands may reach (pypi.org,
      *.npmjs.org, github.com:443), within the operator's MEMQL_EGRESS_CEILING;
      --secret: an operator secret (MEMQL_EGRESS_SECRETS) sent to its hosts only
  memql runs ls [--status STATUS] [--limit N] [--before ID]   your runs, newest first
  memql runs get <runId>
  memql runs end <runId> <succeeded|failed|cancelled|abandoned>
  memql runs delete <runId>

network (a run has none unless given hosts; changes reach its next connection)
  memql network show <runId>
  memql network allow <runId> HOST[,HOST...]... [--secret NAME]...   adds them
  memql network set <runId> [HOST[,HOST...]...] [--secret NAME]...   replaces all
  memql network clear <runId>                      no network again

commands
  memql exec <runId> [--timeout-ms MS] [--cwd DIR] [--output PATH]... [--needs NEED,...] [--os OS] -- <command...>
      streams the output live; exits with the command's exit code. One word after
      -- is a shell line ('cat a | wc -l'); several are a command and its
      arguments, passed exactly (grep "two words" notes.txt). Piped stdin is the
      command's standard input. Each --output file is promoted as an artifact
      when the command exits 0; what became of each is printed after it. --needs
      (display, gpu, macos_tooling, user_files) and --os (darwin, linux, ...) give the
      environment hint: a call a workbench cannot serve goes to one of your worker hosts
  memql commands get <commandId>
  memql commands list <runId> [--status STATUS] [--limit N] [--before ID]
      newest first, without output; finds a command whose call was cut off

background processes (memql ps is the same; they outlive the call that starts them)
  memql processes start <runId> [--cwd DIR] -- <command...>   prints its process id
  memql processes ls <runId> [--running]                     newest first
  memql processes get <runId> <processId>
  memql processes logs <runId> <processId> [-f]    stdout and stderr so far; -f follows
      live until it ends, then exits with its exit code (Ctrl-C stops following only)
  memql processes stdin <runId> <processId> (--content TEXT | --from FILE|-) [--eof]
  memql processes kill <runId> <processId> [--signal SIGTERM|SIGINT|SIGKILL|...]
  memql processes wait <runId> <processId> [--timeout-ms MS]   exits with its exit
      code, or 124 while it still runs
  memql shell <runId> [--cwd DIR]    an interactive terminal in the run's sandbox (a
      person token: MEMQL_TOKEN of kind person); exits with the shell's exit code

workspace history (every change of a run's files is a version)
  memql versions <runId> [--limit N] [--before V] [--labelled]   newest first
  memql diff <runId> <from> [<to>]        paths added (A), changed (M), removed (D)
  memql checkpoint <runId> <label> [--version V]   label a version (default: current)
  memql checkpoint <runId> <label> --remove        take the label off
  memql restore <runId> <version|label>   the workspace as it was, as a new version
  memql fork <runId> [<version|label>]    a new run starting there; prints its id

files
  memql fs read <runId> <path> [--out FILE]             to stdout unless --out
  memql fs write <runId> <path> (--from FILE|- | --content TEXT) [--append]
  memql fs ls <runId> [path] [-r]
  memql promote <runId> <path> [--name NAME] [--content-type TYPE]
      prints the new artifact id

workspaces, artifacts, fleet
  memql workspaces [--all]                               --all: released ones too
  memql artifacts list [--run RUNID]
  memql artifacts download <artifactId> [--out FILE] [--progress]
  memql fleet

tokens (with an operator credential as --token; npm start keeps one in
<data dir>/operator-token)
  memql tokens create <userId> [--label TEXT]            prints the new token once
      --kind agent (default): for tool loops, MCP and memql worker;
      --kind person: the user's own sign-in (console, CLI), which decides consent
  memql tokens ls [--user USERID]                        ids, never secrets
  memql tokens revoke <tokenId>
  memql build <runId> [--ref REF] [--script NAME]
      a package build in the run's workspace: git checkout REF (when given), npm ci,
      npm run NAME (default build), as uid 10001 without network, on a replica that
      has node, npm and git; streams the output, exits like exec

worker hosts (your own machines running "memql worker"; see docs/workers.md; raising a
scope, kill-switch off and consent approve/deny take your person token)
  memql workers ls                             connected or not, scope, kill switch
  memql workers scope <workerId> <none|observe|full>
      the standing scope: observe permits fs_read and fs_list only, full every
      worker action; none revokes it
  memql workers kill-switch <on|off> [--worker ID]
      on: no call runs on any of your workers (or only not on --worker ID), and
      the calls running there are stopped
  memql workers invocations [--run RUNID] [--worker ID]
      calls that were sent to a worker, and why
  memql consent ls [--status pending|approved|denied]    pending by default
  memql consent approve <requestId> [--scope observe|full]
      grants the worker the scope the request needs (or --scope); the call runs
      when it is repeated
  memql consent deny <requestId>

worker host (on your own machine; settings from MEMQL_WORKER_*, see docs/workers.md)
  memql worker     dial the agent at MEMQL_WORKER_AGENT with MEMQL_WORKER_TOKEN and serve
                   calls rerouted to this machine against MEMQL_WORKER_ROOT, until Ctrl-C

MCP
  memql mcp        an MCP server on stdin/stdout for desktop and IDE agents: the
                   workbench actions and open_run/end_run/list_runs as tools,
                   promoted artifacts as resources (uses --url and --token)

options
  --url URL        API address (env MEMQL_URL); npm start prints it
  --token TOKEN    bearer token (env MEMQL_TOKEN); npm start prints a development token
  --json           machine-readable output on stdout
  --agent ID       agentId recorded on calls (default memql-cli)
  --task ID        taskId recorded on calls (default cli)
  -h, --help       this text

exit codes
  0 success, 1 error (printed as "error: <code>: <message>"), 2 usage
  exec: the command's own exit code; 124 timed out; 130 cancelled (Ctrl-C cancels
  the command); 137 killed for memory; 128+N killed by signal N; 125 did not run;
  141 when the reader of memql's output went away (the command is cancelled)
`;

/** Exit code for a timed-out command (as coreutils `timeout`). */
export const EXIT_TIMED_OUT = 124;
/** Exit code for a cancelled command (as a shell after Ctrl-C). */
export const EXIT_CANCELLED = 130;
/** Exit code for a command killed for exceeding its memory limit (128 + SIGKILL). */
export const EXIT_OOM = 137;
/** Exit code when stdout's reader went away (128 + SIGPIPE, as a shell reports it). */
export const EXIT_BROKEN_PIPE = 141;
/** Exit code for a command that ended without an exit code or signal (as `docker run`). */
export const EXIT_DID_NOT_RUN = 125;

/** The exit code `memql exec` ends with, from how the command ended. */
export function execExitCode(
  payload: Pick<ExecPayload, 'exitCode' | 'signal' | 'timedOut' | 'cancelled' | 'oomKilled'>,
): number {
  if (payload.timedOut) return EXIT_TIMED_OUT;
  if (payload.cancelled) return EXIT_CANCELLED;
  if (payload.oomKilled) return EXIT_OOM;
  if (payload.exitCode !== null) return payload.exitCode;
  if (payload.signal !== null) {
    const number = (constants.signals as Record<string, number | undefined>)[payload.signal];
    if (number !== undefined) return 128 + number;
  }
  return EXIT_DID_NOT_RUN;
}

/** What became of an exec's expected outputs, one line each (for stderr). */
export function formatOutputs(outputs: readonly ExpectedOutputResult[]): string {
  return outputs
    .map((o) =>
      'artifact' in o
        ? `memql: output ${o.path}: artifact ${o.artifact.artifactId} (${o.artifact.size} bytes)\n`
        : `memql: output ${o.path} not promoted: ${o.error.message}\n`,
    )
    .join('');
}

/** What to do about an error, by code; empty when the message says enough. */
export function hintFor(code: string): string {
  switch (code) {
    case 'unauthenticated':
      return 'check --token or MEMQL_TOKEN (npm start prints a development token)';
    case 'unavailable':
      return 'check --url or MEMQL_URL and that the node is running; then retry';
    case 'not_found':
      return 'the id is wrong or belongs to another user; list yours with "memql runs ls" or "memql artifacts list"';
    case 'run_ended':
      return 'the run has ended and its workspace is released; start another with "memql runs create"';
    case 'workspace_owner_unresolved':
      return 'create the run first with "memql runs create" and use the id it prints';
    case 'path_not_found':
      return 'list the workspace with "memql fs ls <runId> -r"';
    case 'invalid_path':
      return 'paths are relative to the workspace root; no leading "/" and no ".."';
    case 'egress_not_allowed':
      return "a run may reach only hosts within the operator's MEMQL_EGRESS_CEILING (the message lists them); ask the operator for more";
    case 'command_not_allowed':
      return 'use only allowlisted programs; the message names the one refused';
    case 'payload_too_large':
      return 'files written through the API are at most 32 MiB (make larger ones in the workspace with exec or fetch); reads go in parts';
    case 'no_sandbox':
      return 'the node has no sandbox runner; install bubblewrap or configure MEMQL_RUNNER on the node';
    case 'consent_required':
      return 'the user decides the request, in the console; repeat the call once they have approved it';
    case 'kill_switch_engaged':
      return 'computer use is off for that worker; only the user turns it back on, in the console';
    case 'person_required':
      return 'only the user can decide this, signed in to the console; an agent token cannot';
    case 'worker_unavailable':
      return 'start "memql worker" on a machine that provides what the call needs; "memql workers ls" lists yours';
    case 'internal':
      return 'this is a bug; the node logs have the details';
    default:
      return '';
  }
}

/** `error: <code>: <message>` plus a hint line, without repeating the code. */
export function formatError(code: string, message: string): string {
  const text = message.startsWith(`${code}:`) ? message.slice(code.length + 1).trim() : message;
  const hint = hintFor(code);
  return `error: ${code}: ${text}\n${hint === '' ? '' : `hint: ${hint}\n`}`;
}

/** Bytes for people: `512 B`, `1.5 KiB`, `12.0 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** One progress line: `3.0 MiB / 12.0 MiB  25%`, or without a total when unknown. */
export function formatProgress(received: number, total: number | null): string {
  if (total === null || total === 0) return formatBytes(received);
  const pct = Math.floor((received / total) * 100);
  return `${formatBytes(received)} / ${formatBytes(total)}  ${pct}%`;
}

/** A run as `key: value` lines. */
export function formatRun(run: Run): string {
  return [
    `id:             ${run.id}`,
    `status:         ${run.status}`,
    `owner:          ${run.ownerUserId}`,
    `conversation:   ${run.conversationId ?? '-'}`,
    // An agent node from before run networks answers without `network`.
    `network:        ${run.network === undefined || run.network.allow.length === 0 ? 'none' : run.network.allow.join(', ')}`,
    ...(run.network !== undefined && run.network.secrets.length > 0
      ? [`secrets:        ${run.network.secrets.join(', ')}`]
      : []),
    `created:        ${run.createdAt}`,
    '',
  ].join('\n');
}

/** A page of the caller's runs as a table, with how to read the next page. */
export function formatRuns(page: RunPage): string {
  if (page.runs.length === 0) return 'no runs\n';
  const rows = page.runs.map((r) => [r.id, r.status, r.conversationId ?? '-', r.createdAt]);
  const more =
    page.nextBefore === null ? '' : `(older runs: memql runs ls --before ${page.nextBefore})\n`;
  return table(['ID', 'STATUS', 'CONVERSATION', 'CREATED'], rows) + more;
}

/** Users' tokens as a table, without secrets. */
export function formatTokens(tokens: readonly TokenRecord[]): string {
  if (tokens.length === 0) return 'no tokens\n';
  return table(
    ['ID', 'USER', 'KIND', 'LABEL', 'CREATED', 'REVOKED'],
    tokens.map((k) => [k.id, k.userId, k.kind, k.label ?? '-', k.createdAt, k.revokedAt ?? '-']),
  );
}

/** The caller's workspaces as a table. */
export function formatWorkspaces(workspaces: readonly WorkspaceRecord[]): string {
  if (workspaces.length === 0) return 'no workspaces\n';
  return table(
    ['RUN', 'NODE', 'STATUS', 'RELEASED', 'CREATED'],
    workspaces.map((w) => [
      w.runId,
      w.nodeId ?? '-',
      w.status,
      w.releasedReason === null ? '-' : `${w.releasedReason} at ${w.releasedAt ?? '?'}`,
      w.createdAt,
    ]),
  );
}

/** Artifacts as a table. */
export function formatArtifacts(artifacts: readonly ArtifactRecord[]): string {
  if (artifacts.length === 0) return 'no artifacts\n';
  return table(
    ['ID', 'RUN', 'NAME', 'SIZE', 'TYPE', 'SHA256', 'CREATED'],
    artifacts.map((a) => [
      a.id,
      a.runId,
      a.name,
      formatBytes(a.size),
      a.contentType,
      a.sha256.slice(0, 12),
      a.createdAt,
    ]),
  );
}

/** A page of a run's commands as a table, and how to get the next page. */
export function formatCommands(runId: string, page: CommandPage): string {
  if (page.commands.length === 0) return 'no commands\n';
  const rows = page.commands.map((c) => [
    c.id,
    c.callId ?? '-',
    c.status,
    c.exitCode === null ? (c.signal ?? '-') : String(c.exitCode),
    c.durationMs === null ? '-' : `${c.durationMs} ms`,
    c.queuedAt,
  ]);
  const more =
    page.nextBefore === null
      ? ''
      : `(older commands: memql commands list ${runId} --before ${page.nextBefore})\n`;
  return table(['ID', 'CALL', 'STATUS', 'EXIT', 'DURATION', 'QUEUED'], rows) + more;
}

/** An `fs_list` answer: one line per entry, directories with a trailing `/`. */
export function formatListing(listing: FsListPayload): string {
  const rows = listing.entries.map((e) => {
    const mark =
      e.type === 'directory' ? 'd' : e.type === 'symlink' ? 'l' : e.type === 'file' ? '-' : '?';
    const size = e.type === 'directory' ? '' : String(e.size);
    return `${mark} ${size.padStart(10)}  ${e.path}${e.type === 'directory' ? '/' : ''}`;
  });
  if (listing.truncated) rows.push('(more entries not shown)');
  return rows.length === 0 ? '' : `${rows.join('\n')}\n`;
}

/** The fleet: one line per replica, then the caller's own worker hosts. */
export function formatFleet(fleet: FleetView): string {
  const lines = [`mode: ${fleet.mode}`];
  for (const replica of fleet.replicas) {
    lines.push(
      Object.entries(replica)
        .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
        .join('  '),
    );
  }
  // An agent node from before worker hosts answers without `workers`.
  const workers = fleet.workers ?? [];
  const mine = workers.length === 0 ? '' : `your workers:\n${workerRows(workers)}`;
  return `${lines.join('\n')}\n${mine}`;
}
