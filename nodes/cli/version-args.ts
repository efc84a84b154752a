/**
 * The `memql versions`, `diff`, `checkpoint`, `restore` and `fork` command lines: a
 * run's workspace history. Pure, like the rest of the parser. A version is named by its
 * number, or (where a label may stand for it) by a checkpoint label.
 */
import { take, UsageError } from './cli-usage.js';

/** A version by number, or by label. */
export type CliVersionRef = { version: number } | { label: string };

/** A parsed history subcommand. */
export type VersionCliCommand =
  | { kind: 'versions'; runId: string; limit?: number; before?: number; labelled: boolean }
  | { kind: 'diff'; runId: string; from: number; to?: number }
  | { kind: 'checkpoint'; runId: string; label: string; version?: number; remove: boolean }
  | { kind: 'restore'; runId: string; ref: CliVersionRef }
  | { kind: 'fork'; runId: string; ref?: CliVersionRef };

/** The options these subcommands read. */
export interface VersionOptionValues {
  readonly limit?: string;
  readonly before?: string;
  readonly labelled?: boolean;
  readonly version?: string;
  readonly remove?: boolean;
}

function versionNumber(value: string, what: string): number {
  if (!/^[1-9]\d{0,14}$/.test(value)) {
    throw new UsageError(`${what}: expected a version number (1 or more), not "${value}"`);
  }
  return Number(value);
}

/** A number is a version; anything else a label. */
function ref(word: string): CliVersionRef {
  return /^\d+$/.test(word) ? { version: versionNumber(word, 'version') } : { label: word };
}

/** `memql versions | diff | checkpoint | restore | fork ...`. */
export function parseVersions(
  group: 'versions' | 'diff' | 'checkpoint' | 'restore' | 'fork',
  all: readonly string[],
  v: VersionOptionValues,
): VersionCliCommand {
  switch (group) {
    case 'versions': {
      const [runId] = take(all, ['<runId>'], 'versions');
      return {
        kind: 'versions',
        runId: runId!,
        ...(v.limit === undefined ? {} : { limit: versionNumber(v.limit, '--limit') }),
        ...(v.before === undefined ? {} : { before: versionNumber(v.before, '--before') }),
        labelled: v.labelled === true,
      };
    }
    case 'diff': {
      const [runId, from, to] = take(all, ['<runId>', '<from>'], 'diff', 1);
      return {
        kind: 'diff',
        runId: runId!,
        from: versionNumber(from!, 'diff'),
        ...(to === undefined ? {} : { to: versionNumber(to, 'diff') }),
      };
    }
    case 'checkpoint': {
      const [runId, label] = take(all, ['<runId>', '<label>'], 'checkpoint');
      if (v.remove && v.version !== undefined) {
        throw new UsageError('checkpoint: --remove takes the label off; give no --version');
      }
      return {
        kind: 'checkpoint',
        runId: runId!,
        label: label!,
        ...(v.version === undefined ? {} : { version: versionNumber(v.version, '--version') }),
        remove: v.remove === true,
      };
    }
    case 'restore': {
      const [runId, to] = take(all, ['<runId>', '<version|label>'], 'restore');
      return { kind: 'restore', runId: runId!, ref: ref(to!) };
    }
    case 'fork': {
      const [runId, at] = take(all, ['<runId>'], 'fork', 1);
      return { kind: 'fork', runId: runId!, ...(at === undefined ? {} : { ref: ref(at) }) };
    }
  }
}
