/**
 * The `memql` command line as data: `parseCli(argv, env)` turns arguments and the
 * environment into one {@link CliInvocation}, or throws a {@link UsageError}. Pure,
 * so every form is tested without a server.
 */
import { parseArgs } from 'node:util';
import { quote } from 'shell-quote';
import {
  type EnvironmentHint,
  GOOS_VALUES,
  isTerminalRunStatus,
  isTokenKind,
  NEEDS,
  type RunStatus,
  type TerminalRunStatus,
  type TokenKind,
} from '../../src/client/index.js';
import { take, UsageError } from './cli-usage.js';
import { hostList, type NetworkCliCommand, parseNetwork, secretList } from './network-args.js';
import { type ProcessCliCommand, parseProcesses, parseShell } from './process-args.js';
import { parseVersions, type VersionCliCommand } from './version-args.js';
import { parseConsent, parseWorkers, type WorkerCliCommand } from './worker-args.js';

export { UsageError } from './cli-usage.js';

/** One subcommand with its arguments. */
export type CliCommand =
  | { kind: 'help'; missingCommand?: true }
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
  | {
      kind: 'exec';
      runId: string;
      command: string;
      timeoutMs?: number;
      cwd?: string;
      /** Expected outputs: workspace files promoted when the command exits 0. */
      outputs?: { path: string }[];
      /** The environment hint (`--needs`, `--os`): what the command needs beyond a workbench. */
      environment?: EnvironmentHint;
    }
  | { kind: 'commands-get'; commandId: string }
  | { kind: 'commands-list'; runId: string; status?: string; limit?: number; before?: string }
  | { kind: 'fs-read'; runId: string; path: string; out?: string }
  | {
      kind: 'fs-write';
      runId: string;
      path: string;
      source: { from: string } | { content: string };
      append: boolean;
    }
  | { kind: 'fs-ls'; runId: string; path: string; recursive: boolean }
  | { kind: 'promote'; runId: string; path: string; name?: string; contentType?: string }
  | { kind: 'workspaces'; all: boolean }
  | { kind: 'artifacts-list'; runId?: string }
  | { kind: 'artifacts-download'; artifactId: string; out?: string; progress: boolean }
  | { kind: 'fleet' }
  | { kind: 'mcp' }
  | { kind: 'tokens-create'; userId: string; label?: string; tokenKind?: TokenKind }
  | { kind: 'tokens-list'; userId?: string }
  | { kind: 'tokens-revoke'; tokenId: string }
  | { kind: 'build'; runId: string; ref?: string; script?: string }
  | NetworkCliCommand
  | ProcessCliCommand
  | VersionCliCommand
  | WorkerCliCommand;

/** Options every subcommand accepts. */
export interface GlobalOptions {
  /** The API address, from `--url` or `MEMQL_URL`. */
  readonly url: string | undefined;
  /** The bearer token, from `--token` or `MEMQL_TOKEN`. */
  readonly token: string | undefined;
  /** Machine-readable output. */
  readonly json: boolean;
  /** The `agentId` recorded on dispatches (`--agent`, default `memql-cli`). */
  readonly agentId: string;
  /** The `taskId` recorded on dispatches (`--task`, default `cli`). */
  readonly taskId: string;
}

/** A parsed command line. */
export interface CliInvocation {
  readonly command: CliCommand;
  readonly global: GlobalOptions;
}

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  agent: { type: 'string' },
  task: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  conversation: { type: 'string' },
  'retention-ms': { type: 'string' },
  'timeout-ms': { type: 'string' },
  cwd: { type: 'string' },
  output: { type: 'string', multiple: true },
  out: { type: 'string', short: 'o' },
  from: { type: 'string' },
  content: { type: 'string' },
  append: { type: 'boolean' },
  recursive: { type: 'boolean', short: 'r' },
  all: { type: 'boolean', short: 'a' },
  run: { type: 'string' },
  progress: { type: 'boolean' },
  name: { type: 'string' },
  'content-type': { type: 'string' },
  status: { type: 'string' },
  limit: { type: 'string' },
  before: { type: 'string' },
  label: { type: 'string' },
  kind: { type: 'string' },
  user: { type: 'string' },
  ref: { type: 'string' },
  script: { type: 'string' },
  worker: { type: 'string' },
  scope: { type: 'string' },
  allow: { type: 'string', multiple: true },
  secret: { type: 'string', multiple: true },
  running: { type: 'boolean' },
  follow: { type: 'boolean', short: 'f' },
  eof: { type: 'boolean' },
  signal: { type: 'string', short: 's' },
  labelled: { type: 'boolean' },
  needs: { type: 'string', multiple: true },
  os: { type: 'string' },
  version: { type: 'string' },
  remove: { type: 'boolean' },
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = {
  [K in OptionName]?: (typeof OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof OPTIONS)[K]['type'] extends 'string'
      ? string
      : boolean;
};

const GLOBAL_OPTIONS: readonly OptionName[] = ['url', 'token', 'json', 'agent', 'task', 'help'];

/** The options each subcommand accepts besides the global ones. */
const COMMAND_OPTIONS: Record<CliCommand['kind'], readonly OptionName[]> = {
  help: [],
  'runs-create': ['conversation', 'retention-ms', 'allow', 'secret'],
  'runs-list': ['status', 'limit', 'before'],
  'runs-get': [],
  'runs-end': [],
  'runs-delete': [],
  exec: ['timeout-ms', 'cwd', 'output', 'needs', 'os'],
  'commands-get': [],
  'commands-list': ['status', 'limit', 'before'],
  'fs-read': ['out'],
  'fs-write': ['from', 'content', 'append'],
  'fs-ls': ['recursive'],
  promote: ['name', 'content-type'],
  workspaces: ['all'],
  'artifacts-list': ['run'],
  'artifacts-download': ['out', 'progress'],
  fleet: [],
  mcp: [],
  'tokens-create': ['label', 'kind'],
  'tokens-list': ['user'],
  'tokens-revoke': [],
  build: ['ref', 'script'],
  'workers-list': [],
  'workers-scope': [],
  'workers-kill-switch': ['worker'],
  'workers-invocations': ['run', 'worker'],
  'consent-list': ['status'],
  'consent-approve': ['scope'],
  'consent-deny': [],
  'network-show': [],
  'network-allow': ['secret'],
  'network-set': ['secret'],
  'network-clear': [],
  'processes-start': ['cwd'],
  'processes-list': ['running'],
  'processes-get': [],
  'processes-logs': ['follow'],
  'processes-stdin': ['from', 'content', 'eof'],
  'processes-kill': ['signal'],
  'processes-wait': ['timeout-ms'],
  shell: ['cwd'],
  versions: ['limit', 'before', 'labelled'],
  diff: [],
  checkpoint: ['version', 'remove'],
  restore: [],
  fork: [],
};

/**
 * The environment hint of `--needs NEED[,NEED...]` (repeatable) and `--os OS`; undefined
 * when neither is given.
 */
function environmentHint(
  needs: readonly string[] | undefined,
  os: string | undefined,
): EnvironmentHint | undefined {
  if (needs === undefined && os === undefined) return undefined;
  const list = [...new Set((needs ?? []).flatMap((n) => n.split(',')).map((n) => n.trim()))];
  const unknown = list.filter((n) => !(NEEDS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new UsageError(
      `--needs: "${unknown[0]}" is not a need; the needs are ${NEEDS.join(', ')}`,
    );
  }
  if (os !== undefined && !(GOOS_VALUES as readonly string[]).includes(os)) {
    throw new UsageError(
      `--os: "${os}" is not an OS; use ${GOOS_VALUES.slice(0, 3).join(', ')}, ...`,
    );
  }
  return {
    ...(os === undefined ? {} : { os: os as EnvironmentHint['os'] & string }),
    ...(list.length === 0 ? {} : { needs: list as NonNullable<EnvironmentHint['needs']> }),
  };
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`--${flag} expects a positive integer`);
  return Number(value);
}

/**
 * The shell line of `memql exec`: one word after `--` is a shell line as it is
 * (`'cat a | wc -l'`); several are a command and its arguments, each quoted, so the
 * sandbox runs exactly that argv (`grep "hello world" notes.txt` searches for the two
 * words, not for "hello" in two files).
 */
export function execLine(words: readonly string[]): string {
  return words.length === 1 ? words[0]! : quote([...words]);
}

function parseCommand(
  words: readonly string[],
  afterDash: readonly string[],
  v: Values,
): CliCommand {
  const [group, sub, ...rest] = words;
  const all = words.slice(1);
  switch (group) {
    case undefined:
      return { kind: 'help', missingCommand: true } as const;
    case 'help':
      return { kind: 'help' } as const;
    case 'runs': {
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
      if (sub === 'get')
        return { kind: 'runs-get', runId: take(rest, ['<runId>'], 'runs get')[0]! };
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
    case 'exec': {
      const [runId, ...inline] = take(all, ['<runId>'], 'exec', Number.POSITIVE_INFINITY);
      const usage = 'memql exec <runId> -- <command...>';
      if (afterDash.length === 0) {
        throw new UsageError(
          inline.length === 0
            ? `exec: missing the command after --: ${usage} (one word is a shell line, several are the command and its arguments)`
            : `exec: the command goes after --: ${usage}`,
        );
      }
      if (inline.length > 0) {
        throw new UsageError(
          `exec: "${inline[0]}" stands before --; the whole command goes after it: ${usage}`,
        );
      }
      const timeoutMs = positiveInt(v['timeout-ms'], 'timeout-ms');
      const environment = environmentHint(v.needs, v.os);
      return {
        kind: 'exec',
        runId: runId!,
        command: execLine(afterDash),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(v.cwd === undefined ? {} : { cwd: v.cwd }),
        ...(v.output === undefined ? {} : { outputs: v.output.map((path) => ({ path })) }),
        ...(environment === undefined ? {} : { environment }),
      } as const;
    }
    case 'commands': {
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
    case 'fs':
      return parseFs(sub, rest, v);
    case 'promote': {
      const [runId, path] = take(all, ['<runId>', '<path>'], 'promote');
      return {
        kind: 'promote',
        runId: runId!,
        path: path!,
        ...(v.name === undefined ? {} : { name: v.name }),
        ...(v['content-type'] === undefined ? {} : { contentType: v['content-type'] }),
      } as const;
    }
    case 'workspaces':
      take(all, [], 'workspaces');
      return { kind: 'workspaces', all: v.all === true } as const;
    case 'artifacts': {
      if (sub === 'list') {
        take(rest, [], 'artifacts list');
        return {
          kind: 'artifacts-list',
          ...(v.run === undefined ? {} : { runId: v.run }),
        } as const;
      }
      if (sub === 'download') {
        const [artifactId] = take(rest, ['<artifactId>'], 'artifacts download');
        return {
          kind: 'artifacts-download',
          artifactId: artifactId!,
          progress: v.progress === true,
          ...(v.out === undefined ? {} : { out: v.out }),
        } as const;
      }
      throw new UsageError(`artifacts: expected list or download, not "${sub ?? ''}"`);
    }
    case 'fleet':
      take(all, [], 'fleet');
      return { kind: 'fleet' } as const;
    case 'mcp':
      take(all, [], 'mcp');
      return { kind: 'mcp' } as const;
    case 'tokens': {
      if (sub === 'create') {
        const [userId] = take(rest, ['<userId>'], 'tokens create');
        if (v.kind !== undefined && !isTokenKind(v.kind)) {
          throw new UsageError(
            `tokens create: --kind must be agent (a tool loop's) or person (the user's own), not "${v.kind}"`,
          );
        }
        return {
          kind: 'tokens-create',
          userId: userId!,
          ...(v.label === undefined ? {} : { label: v.label }),
          ...(v.kind === undefined ? {} : { tokenKind: v.kind }),
        } as const;
      }
      if (sub === 'ls' || sub === 'list') {
        take(rest, [], `tokens ${sub}`);
        return {
          kind: 'tokens-list',
          ...(v.user === undefined ? {} : { userId: v.user }),
        } as const;
      }
      if (sub === 'revoke') {
        return { kind: 'tokens-revoke', tokenId: take(rest, ['<tokenId>'], 'tokens revoke')[0]! };
      }
      throw new UsageError(`tokens: expected create, ls or revoke, not "${sub ?? ''}"`);
    }
    case 'build': {
      const [runId] = take(all, ['<runId>'], 'build');
      return {
        kind: 'build',
        runId: runId!,
        ...(v.ref === undefined ? {} : { ref: v.ref }),
        ...(v.script === undefined ? {} : { script: v.script }),
      } as const;
    }
    case 'workers':
      return parseWorkers(sub, rest, v);
    case 'consent':
      return parseConsent(sub, rest, v);
    case 'network':
      return parseNetwork(sub, rest, v);
    case 'shell':
      return parseShell(all, v);
    case 'versions':
    case 'diff':
    case 'checkpoint':
    case 'restore':
    case 'fork':
      return parseVersions(group, all, v);
    case 'processes':
    case 'ps':
      return parseProcesses(sub, rest, afterDash.length > 0 ? execLine(afterDash) : null, v);
    default:
      throw new UsageError(`unknown command "${group}"`);
  }
}

function parseFs(sub: string | undefined, rest: readonly string[], v: Values): CliCommand {
  if (sub === 'read') {
    const [runId, path] = take(rest, ['<runId>', '<path>'], 'fs read');
    return { kind: 'fs-read', runId: runId!, path: path!, ...(v.out ? { out: v.out } : {}) };
  }
  if (sub === 'write') {
    const [runId, path] = take(rest, ['<runId>', '<path>'], 'fs write');
    if ((v.from === undefined) === (v.content === undefined)) {
      throw new UsageError('fs write: pass exactly one of --from FILE (or -) and --content TEXT');
    }
    const source = v.from === undefined ? { content: v.content! } : { from: v.from };
    return { kind: 'fs-write', runId: runId!, path: path!, source, append: v.append === true };
  }
  if (sub === 'ls') {
    const [runId, path] = take(rest, ['<runId>'], 'fs ls', 1);
    return { kind: 'fs-ls', runId: runId!, path: path ?? '.', recursive: v.recursive === true };
  }
  throw new UsageError(`fs: expected read, write or ls, not "${sub ?? ''}"`);
}

function parseArgv(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Parses `argv` (without the node and script paths). Options may come anywhere
 * before `--`; everything after `--` is the command line of `exec`. Flags win over
 * the environment (`MEMQL_URL`, `MEMQL_TOKEN`).
 */
export function parseCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CliInvocation {
  const parsed = parseArgv(argv);
  const terminator = parsed.tokens.find((t) => t.kind === 'option-terminator');
  const dashAt = terminator === undefined ? Number.POSITIVE_INFINITY : terminator.index;
  const before: string[] = [];
  const after: string[] = [];
  for (const token of parsed.tokens) {
    if (token.kind === 'positional') (token.index > dashAt ? after : before).push(token.value);
  }
  const v = parsed.values as Values;
  const takesLine =
    before[0] === 'exec' ||
    ((before[0] === 'processes' || before[0] === 'ps') && before[1] === 'start');
  if (after.length > 0 && !takesLine) {
    throw new UsageError(
      '"--" is only for exec and processes start: memql exec <runId> -- <command...>',
    );
  }
  const command: CliCommand = v.help ? { kind: 'help' } : parseCommand(before, after, v);
  const allowed = new Set<string>([...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[command.kind]]);
  const stray = Object.keys(v).find((name) => !allowed.has(name));
  if (stray !== undefined) {
    throw new UsageError(`--${stray} does not apply to "${command.kind.replace('-', ' ')}"`);
  }
  const url = v.url ?? env.MEMQL_URL;
  const token = v.token ?? env.MEMQL_TOKEN;
  return {
    command,
    global: {
      url: url === '' ? undefined : url,
      token: token === '' ? undefined : token,
      json: v.json === true,
      agentId: v.agent ?? 'memql-cli',
      taskId: v.task ?? 'cli',
    },
  };
}

/** The address and token, or a usage error saying how to give them. */
export function connection(global: GlobalOptions): { baseUrl: string; token: string } {
  if (global.url === undefined) {
    throw new UsageError(
      'no API address: pass --url http://HOST:PORT or set MEMQL_URL (npm start prints it)',
    );
  }
  if (!/^https?:\/\/[^/]/.test(global.url)) {
    throw new UsageError(
      `--url/MEMQL_URL must be an http:// or https:// address, not "${global.url}"`,
    );
  }
  if (global.token === undefined) {
    throw new UsageError(
      'no token: pass --token or set MEMQL_TOKEN (npm start prints a development token)',
    );
  }
  return { baseUrl: global.url, token: global.token };
}
