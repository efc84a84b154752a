/**
 * The `memql exec` and `memql build` command lines: one command in a run's workspace
 * (its shell line after `--`, its limits, expected outputs and environment hint), and
 * the operator's package build. Pure, like the rest of the parser.
 */
import { quote } from 'shell-quote';
import { type EnvironmentHint, GOOS_VALUES, NEEDS } from '../../src/client/index.js';
import { positiveInt, take, UsageError } from './cli-usage.js';

/** A parsed `exec` or `build`. */
export type ExecCliCommand =
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
  | { kind: 'build'; runId: string; ref?: string; script?: string };

/** The options these subcommands read. */
export interface ExecOptionValues {
  readonly 'timeout-ms'?: string;
  readonly cwd?: string;
  readonly output?: string[];
  readonly needs?: string[];
  readonly os?: string;
  readonly ref?: string;
  readonly script?: string;
}

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

/**
 * The shell line of `memql exec`: one word after `--` is a shell line as it is
 * (`'cat a | wc -l'`); several are a command and its arguments, each quoted, so the
 * sandbox runs exactly that argv (`grep "hello world" notes.txt` searches for the two
 * words, not for "hello" in two files).
 */
export function execLine(words: readonly string[]): string {
  return words.length === 1 ? words[0]! : quote([...words]);
}

/** `memql exec <runId> -- <command...>`: the words before `--` and after it. */
export function parseExec(
  all: readonly string[],
  afterDash: readonly string[],
  v: ExecOptionValues,
): ExecCliCommand {
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

/** `memql build <runId>`. */
export function parseBuild(all: readonly string[], v: ExecOptionValues): ExecCliCommand {
  const [runId] = take(all, ['<runId>'], 'build');
  return {
    kind: 'build',
    runId: runId!,
    ...(v.ref === undefined ? {} : { ref: v.ref }),
    ...(v.script === undefined ? {} : { script: v.script }),
  } as const;
}
