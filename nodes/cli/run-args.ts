/**
 * The `memql runs` and `memql commands` command lines: a run's life (create, list, get,
 * end, delete) and the commands it ran. Pure, like the rest of the parser.
 */
import {
  isTerminalRunStatus,
  type RunStatus,
  type TerminalRunStatus,
} from '../../src/client/index.js';
import { positiveInt, take, UsageError } from './cli-usage.js';
import { hostList, secretList } from './network-args.js';

/** A parsed `runs` or `commands` subcommand. */
export type RunCliCommand =
  | {
      kind: 'runs-create';
      conversationId?: string;
      retentionMs?: number;
      /** Hosts its commands may reach and secrets it opts into (`--allow`, `--secret`). */
      network?: { allow: string[]; secrets: string[] };
    }
  | { kind: 'runs-list'; status?: RunStatus; limit?: number; before?: string }
  | { kind: 'runs-get'; runId: string }
  | { kind: 'runs-end'; runId: string; status: TerminalRunStatus }
  | { kind: 'runs-delete'; runId: string }
  | { kind: 'commands-get'; commandId: string }
  | { kind: 'commands-list'; runId: string; status?: string; limit?: number; before?: string };

/** The options these subcommands read. */
export interface RunOptionValues {
  readonly conversation?: string;
  readonly 'retention-ms'?: string;
  readonly allow?: string[];
  readonly secret?: string[];
  readonly status?: string;
  readonly limit?: string;
  readonly before?: string;
}

/** `memql runs create | list | get | end | delete`. */
export function parseRuns(
  sub: string | undefined,
  rest: readonly string[],
  v: RunOptionValues,
): RunCliCommand {
  if (sub === 'create') {
    take(rest, [], 'runs create');
    const retentionMs = positiveInt(v['retention-ms'], 'retention-ms');
    const allow = hostList(v.allow ?? [], 'runs create: --allow');
    const secrets = secretList(v.secret);
    return {
      kind: 'runs-create',
      ...(v.conversation === undefined ? {} : { conversationId: v.conversation }),
      ...(retentionMs === undefined ? {} : { retentionMs }),
      ...(allow.length === 0 && secrets.length === 0 ? {} : { network: { allow, secrets } }),
    } as const;
  }
  if (sub === 'list' || sub === 'ls') {
    take(rest, [], `runs ${sub}`);
    const status = v.status;
    if (status !== undefined && status !== 'running' && !isTerminalRunStatus(status)) {
      throw new UsageError(
        `runs ${sub}: --status must be running, succeeded, failed, cancelled or abandoned, not "${status}"`,
      );
    }
    const limit = positiveInt(v.limit, 'limit');
    return {
      kind: 'runs-list',
      ...(status === undefined ? {} : { status }),
      ...(limit === undefined ? {} : { limit }),
      ...(v.before === undefined ? {} : { before: v.before }),
    } as const;
  }
  if (sub === 'get') return { kind: 'runs-get', runId: take(rest, ['<runId>'], 'runs get')[0]! };
  if (sub === 'delete') {
    return { kind: 'runs-delete', runId: take(rest, ['<runId>'], 'runs delete')[0]! };
  }
  if (sub === 'end') {
    const [runId, status] = take(rest, ['<runId>', '<status>'], 'runs end');
    if (!isTerminalRunStatus(status)) {
      throw new UsageError(
        `runs end: status must be succeeded, failed, cancelled or abandoned, not "${status}"`,
      );
    }
    return { kind: 'runs-end', runId: runId!, status } as const;
  }
  throw new UsageError(`runs: expected create, list, get, end or delete, not "${sub ?? ''}"`);
}

/** `memql commands get | list`. */
export function parseCommands(
  sub: string | undefined,
  rest: readonly string[],
  v: RunOptionValues,
): RunCliCommand {
  if (sub === 'get') {
    return { kind: 'commands-get', commandId: take(rest, ['<commandId>'], 'commands get')[0]! };
  }
  if (sub === 'list') {
    const [runId] = take(rest, ['<runId>'], 'commands list');
    const limit = positiveInt(v.limit, 'limit');
    return {
      kind: 'commands-list',
      runId: runId!,
      ...(v.status === undefined ? {} : { status: v.status }),
      ...(limit === undefined ? {} : { limit }),
      ...(v.before === undefined ? {} : { before: v.before }),
    } as const;
  }
  throw new UsageError(`commands: expected get or list, not "${sub ?? ''}"`);
}
