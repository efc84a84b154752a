/**
 * Running one parsed `memql` command against the API: each subcommand calls the
 * client, prints human or JSON output, and returns the process exit code.
 */
import {
  ClientError,
  type CommandStatus,
  type FsListPayload,
  isAbortError,
  type PromotePayload,
  type WorkbenchClient,
} from '../../src/client/index.js';
import { serveMcpStdio } from '../../src/mcp/index.js';
import type { CliInvocation } from './cli-args.js';
import { type CliIo, json, line, payloadOf, Refused } from './cli-io.js';
import {
  EXIT_CANCELLED,
  formatArtifacts,
  formatCommands,
  formatError,
  formatFleet,
  formatListing,
  formatRun,
  formatRuns,
  formatTokens,
  formatWorkspaces,
  USAGE,
} from './cli-output.js';
import { build, exec } from './exec-commands.js';
import { download, fsRead, fsWrite } from './file-commands.js';
import { runNetworkCommand } from './network-commands.js';
import { runProcessCommand } from './process-commands.js';
import { runVersionCommand } from './version-commands.js';
import { runWorkerCommand } from './worker-commands.js';

export type { CliIo } from './cli-io.js';

/**
 * Runs `invocation` and resolves to the exit code. Errors are printed here as
 * `error: <code>: <message>` with a hint, and answer 1; `signal` (Ctrl-C) cancels a
 * running `exec`.
 */
export async function runCli(
  invocation: CliInvocation,
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  try {
    return await runCommand(invocation, client, io, signal);
  } catch (err) {
    if (err instanceof ClientError || err instanceof Refused) {
      io.stderr.write(formatError(err.code, err.message));
      return 1;
    }
    if (isAbortError(err) || signal.aborted) {
      io.stderr.write('memql: cancelled\n');
      return EXIT_CANCELLED;
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('E')) {
      // A local file problem (--from, --out): name it plainly.
      io.stderr.write(`error: local_file: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}

async function runCommand(
  { command, global }: CliInvocation,
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const out = io.stdout;
  const call = (runId: string, action: string, args: Record<string, unknown>) =>
    client.dispatch({ action, args, runId, agentId: global.agentId, taskId: global.taskId });
  const ids = { agentId: global.agentId, taskId: global.taskId };
  switch (command.kind) {
    case 'help':
      out.write(USAGE);
      return 0;
    case 'runs-create': {
      const { kind: _kind, ...options } = command;
      const run = await client.createRun(options);
      global.json ? json(out, { run }) : line(out, run.id);
      return 0;
    }
    case 'runs-list': {
      const { kind: _kind, ...options } = command;
      const page = await client.listRuns(options);
      global.json ? json(out, page) : out.write(formatRuns(page));
      return 0;
    }
    case 'runs-get': {
      const run = await client.getRun(command.runId);
      global.json ? json(out, { run }) : out.write(formatRun(run));
      return 0;
    }
    case 'runs-end': {
      const ended = await client.endRun(command.runId, command.status);
      global.json
        ? json(out, ended)
        : line(out, `run ${ended.run.id} ${ended.run.status}; its workspace is released`);
      return 0;
    }
    case 'runs-delete': {
      const deleted = await client.deleteRun(command.runId);
      global.json
        ? json(out, { deleted })
        : line(
            out,
            `deleted run ${command.runId}: ${deleted.objects} objects, ${deleted.commands} commands, ${deleted.workspaces} workspaces, ${deleted.artifacts} artifacts`,
          );
      return 0;
    }
    case 'exec':
      return exec(command, global, client, io, signal);
    case 'build':
      return build(command, global, client, io, signal);
    case 'commands-get': {
      const record = await client.getCommand(command.commandId);
      if (global.json) {
        json(out, { command: record });
        return 0;
      }
      line(
        out,
        `command ${record.id} (run ${record.runId}): ${record.status}, exit code ${record.exitCode ?? '-'}`,
      );
      // Output that is not text arrives as base64: written back as the bytes it was.
      for (const [name, text, encoding] of [
        ['stdout', record.stdout, record.stdoutEncoding],
        ['stderr', record.stderr, record.stderrEncoding],
      ] as const) {
        if (text === '') continue;
        out.write(`--- ${name}\n`);
        out.write(encoding === 'base64' ? Buffer.from(text, 'base64') : text);
      }
      return 0;
    }
    case 'commands-list': {
      const { kind: _kind, runId, status, ...options } = command;
      const page = await client.listCommands(runId, {
        ...options,
        ...(status === undefined ? {} : { status: status as CommandStatus }),
      });
      global.json ? json(out, page) : out.write(formatCommands(runId, page));
      return 0;
    }
    case 'fs-read':
      return fsRead(command, client, io, global.json, signal, ids);
    case 'fs-write':
      return fsWrite(command, call, client, io, global.json, signal, ids);
    case 'fs-ls': {
      const listing = payloadOf<FsListPayload>(
        await call(command.runId, 'fs_list', { path: command.path, recursive: command.recursive }),
      );
      global.json ? json(out, listing) : out.write(formatListing(listing));
      return 0;
    }
    case 'promote': {
      const { kind: _kind, runId, ...args } = command;
      const artifact = payloadOf<PromotePayload>(await call(runId, 'promote_artifact', args));
      global.json ? json(out, artifact) : line(out, artifact.artifactId);
      return 0;
    }
    case 'workspaces': {
      const workspaces = await client.listWorkspaces({ includeReleased: command.all });
      global.json ? json(out, { workspaces }) : out.write(formatWorkspaces(workspaces));
      return 0;
    }
    case 'artifacts-list': {
      const artifacts = await client.listArtifacts(
        command.runId === undefined ? {} : { runId: command.runId },
      );
      global.json ? json(out, { artifacts }) : out.write(formatArtifacts(artifacts));
      return 0;
    }
    case 'artifacts-download':
      return download(command, global.json, client, io, signal);
    case 'tokens-create': {
      const made = await client.createToken(command.userId, {
        ...(command.label === undefined ? {} : { label: command.label }),
        ...(command.tokenKind === undefined ? {} : { kind: command.tokenKind }),
      });
      global.json ? json(out, made) : line(out, made.secret);
      return 0;
    }
    case 'tokens-list': {
      const tokens = await client.listTokens(
        command.userId === undefined ? {} : { userId: command.userId },
      );
      global.json ? json(out, { tokens }) : out.write(formatTokens(tokens));
      return 0;
    }
    case 'tokens-revoke': {
      const done = await client.revokeToken(command.tokenId);
      global.json
        ? json(out, done)
        : line(
            out,
            done.revoked
              ? `revoked ${done.token.id} (user ${done.token.userId})`
              : `${done.token.id} was already revoked`,
          );
      return 0;
    }
    case 'mcp':
      await serveMcpStdio(
        client,
        { agentId: global.agentId, taskId: global.taskId },
        { stdin: io.stdin, stdout: io.stdout },
        signal,
      );
      return 0;
    case 'fleet': {
      const fleet = await client.fleet();
      global.json ? json(out, fleet) : out.write(formatFleet(fleet));
      return 0;
    }
    case 'network-show':
    case 'network-allow':
    case 'network-set':
    case 'network-clear':
      return runNetworkCommand(command, client, out, global.json);
    case 'processes-start':
    case 'processes-list':
    case 'processes-get':
    case 'processes-logs':
    case 'processes-stdin':
    case 'processes-kill':
    case 'processes-wait':
    case 'shell':
      return runProcessCommand(command, client, io, global.json, signal);
    case 'versions':
    case 'diff':
    case 'checkpoint':
    case 'restore':
    case 'fork':
      return runVersionCommand(command, client, out, global.json);
    default:
      return runWorkerCommand(command, client, out, global.json);
  }
}
