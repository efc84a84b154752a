/**
 * The history actions of `workbenchHost` and what they answer. Every commit of a run's
 * manifest is a version (a number per run, counting up from 1): the actions list the
 * versions, compare two, give one a label (a checkpoint, kept past retention until it
 * is removed) and put the workspace back to one. A restore is itself a new version, so
 * nothing after the restored one is lost: it stays listed.
 *
 * @module
 */

import { z } from 'zod';

/** What made a version. */
export type VersionSource =
  /** A file action (`fs_write`, `fs_delete`, `fetch`, an upload). */
  | 'action'
  /** An `exec` command. */
  | 'command'
  /** The sync of the run's background processes (on a cadence and at each end). */
  | 'process'
  /** `version_restore`. */
  | 'restore'
  /** The first version of a fork. */
  | 'fork'
  /** Committed before versions were recorded. */
  | 'unrecorded';

/** Longest label. */
export const MAX_VERSION_LABEL_CHARS = 100;
/**
 * Pattern of a label: letters, digits, `.`, `_`, `-`, starting with a letter (so a label
 * is never read as a version number).
 */
export const VERSION_LABEL_PATTERN = /^[A-Za-z][A-Za-z0-9._-]*$/;
/** Most versions one `version_list` returns. */
export const MAX_VERSION_LIST = 500;
/** Versions `version_list` returns when `limit` is omitted. */
export const DEFAULT_VERSION_LIST = 50;
/** Most entries one `version_diff` returns; the rest is read with `after`. */
export const MAX_DIFF_ENTRIES = 10_000;
/** Entries `version_diff` returns when `limit` is omitted. */
export const DEFAULT_DIFF_ENTRIES = 1000;

const versionNumber = () => z.int().min(1).max(Number.MAX_SAFE_INTEGER);

/** A checkpoint's label, as a schema field. */
export const versionLabel = () =>
  z
    .string()
    .min(1)
    .max(MAX_VERSION_LABEL_CHARS)
    .regex(VERSION_LABEL_PATTERN, {
      error:
        'expected a label of letters, digits, ".", "_" and "-" that starts with a letter, such as "before-refactor"',
    })
    .describe('A checkpoint label: a letter, then letters, digits, ".", "_" and "-".');

/** `version_list`: the run's versions, newest first, a page at a time. */
export const versionListArgsSchema = z.strictObject({
  limit: z
    .int()
    .min(1)
    .max(MAX_VERSION_LIST)
    .default(DEFAULT_VERSION_LIST)
    .describe('Most versions to return.'),
  before: versionNumber()
    .describe('Only versions older than this one: the `next` of the previous page.')
    .optional(),
  labelled: z.boolean().default(false).describe('Only versions with a label (checkpoints).'),
});

/** `version_diff`: what changed between two versions (paths added, changed, removed). */
export const versionDiffArgsSchema = z
  .strictObject({
    from: versionNumber().describe('The older version.'),
    to: versionNumber().describe('The newer version; the current one when omitted.').optional(),
    limit: z
      .int()
      .min(1)
      .max(MAX_DIFF_ENTRIES)
      .default(DEFAULT_DIFF_ENTRIES)
      .describe('Most entries to return.'),
    after: z
      .string()
      .min(1)
      .max(4096)
      .describe('Only paths after this one: the `next` of the previous page.')
      .optional(),
  })
  .refine((a) => a.to === undefined || a.to !== a.from, {
    error: 'from and to name the same version',
  });

/** `version_checkpoint`: label a version (the current one by default), or remove a label. */
export const versionCheckpointArgsSchema = z.strictObject({
  label: versionLabel(),
  version: versionNumber()
    .describe('The version to label; the current one when omitted.')
    .optional(),
  remove: z
    .boolean()
    .default(false)
    .describe('Remove the label instead (its version then follows retention).'),
});

/** `version_restore`: make the workspace equal to a version, as a new version. */
export const versionRestoreArgsSchema = z.strictObject({
  to: z
    .union([versionNumber(), versionLabel()])
    .describe('The version to restore: its number, or its checkpoint label.'),
});

/** One version as the actions answer it. */
export interface VersionView {
  version: number;
  createdAt: string;
  /** The node that committed it, and the generation it held the workspace at. */
  nodeId: string | null;
  generation: number | null;
  source: VersionSource;
  /** The action that made it, when one did (`fs_write`, `exec`, ...). */
  action: string | null;
  commandId: string | null;
  callId: string | null;
  /** A restore: the version it restored. */
  restoredFrom: number | null;
  /** A fork's first version: where it started. */
  forkedFrom: { runId: string; version: number } | null;
  /** Paths the version added, changed and removed. */
  added: number;
  changed: number;
  removed: number;
  label: string | null;
}

/** `version_list`'s answer. */
export interface VersionListPayload {
  versions: VersionView[];
  /** The run's current version; 0 before the first commit. */
  current: number;
  /** Give it as `before` for the next page; null on the last. */
  next: number | null;
}

/** A path's entry on one side of a diff. */
export interface DiffSide {
  size: number;
  /** SHA-256 of the content, lowercase hex. */
  hash: string;
  /** Permission bits, octal digits. */
  mode: string;
}

/** One path that differs between two versions. */
export interface DiffEntry {
  path: string;
  /** `added` (only in `to`), `removed` (only in `from`), `changed` (content or mode). */
  change: 'added' | 'changed' | 'removed';
  from: DiffSide | null;
  to: DiffSide | null;
}

/** `version_diff`'s answer. */
export interface VersionDiffPayload {
  from: number;
  to: number;
  entries: DiffEntry[];
  /** Counts over the whole difference, not only this page. */
  added: number;
  changed: number;
  removed: number;
  /** Give it as `after` for the next page; null on the last. */
  next: string | null;
}

/** `version_restore`'s answer. */
export interface VersionRestorePayload {
  /** The new version, equal to `restoredFrom`. */
  version: number;
  restoredFrom: number;
  added: number;
  changed: number;
  removed: number;
}
