/**
 * The `memql fs`, `promote`, `workspaces` and `artifacts` command lines: the files of a
 * run's workspace, the artifacts promoted from them, and the workspaces themselves.
 * Pure, like the rest of the parser.
 */
import { take, UsageError } from './cli-usage.js';

/** A parsed file, artifact or workspace subcommand. */
export type FileCliCommand =
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
  | { kind: 'artifacts-download'; artifactId: string; out?: string; progress: boolean };

/** The options these subcommands read. */
export interface FileOptionValues {
  readonly out?: string;
  readonly from?: string;
  readonly content?: string;
  readonly append?: boolean;
  readonly recursive?: boolean;
  readonly name?: string;
  readonly 'content-type'?: string;
  readonly all?: boolean;
  readonly run?: string;
  readonly progress?: boolean;
}

/** `memql fs read | write | ls`. */
export function parseFs(
  sub: string | undefined,
  rest: readonly string[],
  v: FileOptionValues,
): FileCliCommand {
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

/** `memql promote <runId> <path>`. */
export function parsePromote(all: readonly string[], v: FileOptionValues): FileCliCommand {
  const [runId, path] = take(all, ['<runId>', '<path>'], 'promote');
  return {
    kind: 'promote',
    runId: runId!,
    path: path!,
    ...(v.name === undefined ? {} : { name: v.name }),
    ...(v['content-type'] === undefined ? {} : { contentType: v['content-type'] }),
  } as const;
}

/** `memql workspaces`. */
export function parseWorkspaces(all: readonly string[], v: FileOptionValues): FileCliCommand {
  take(all, [], 'workspaces');
  return { kind: 'workspaces', all: v.all === true } as const;
}

/** `memql artifacts list | download`. */
export function parseArtifacts(
  sub: string | undefined,
  rest: readonly string[],
  v: FileOptionValues,
): FileCliCommand {
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
