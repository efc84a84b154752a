/**
 * The `memql` command line as data: `parseCli(argv, env)` turns arguments and the
 * environment into one {@link CliInvocation}, or throws a {@link UsageError}. Pure,
 * so every form is tested without a server.
 */
import { parseArgs } from 'node:util';
import { take, UsageError } from './cli-usage.js';
import { type ExecCliCommand, execLine, parseBuild, parseExec } from './exec-args.js';
import {
  type FileCliCommand,
  parseArtifacts,
  parseFs,
  parsePromote,
  parseWorkspaces,
} from './file-args.js';
import { type NetworkCliCommand, parseNetwork } from './network-args.js';
import { type ProcessCliCommand, parseProcesses, parseShell } from './process-args.js';
import { parseCommands, parseRuns, type RunCliCommand } from './run-args.js';
import { parseTokens, type TokenCliCommand } from './token-args.js';
import { parseVersions, type VersionCliCommand } from './version-args.js';
import { parseConsent, parseWorkers, type WorkerCliCommand } from './worker-args.js';

export { UsageError } from './cli-usage.js';
export { execLine } from './exec-args.js';

/** One subcommand with its arguments. */
export type CliCommand =
  | { kind: 'help'; missingCommand?: true }
  | RunCliCommand
  | ExecCliCommand
  | FileCliCommand
  | { kind: 'fleet' }
  | { kind: 'mcp' }
  | TokenCliCommand
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
    case 'runs':
      return parseRuns(sub, rest, v);
    case 'exec':
      return parseExec(all, afterDash, v);
    case 'commands':
      return parseCommands(sub, rest, v);
    case 'fs':
      return parseFs(sub, rest, v);
    case 'promote':
      return parsePromote(all, v);
    case 'workspaces':
      return parseWorkspaces(all, v);
    case 'artifacts':
      return parseArtifacts(sub, rest, v);
    case 'fleet':
      take(all, [], 'fleet');
      return { kind: 'fleet' } as const;
    case 'mcp':
      take(all, [], 'mcp');
      return { kind: 'mcp' } as const;
    case 'tokens':
      return parseTokens(sub, rest, v);
    case 'build':
      return parseBuild(all, v);
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
