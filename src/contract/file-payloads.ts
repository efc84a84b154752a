/**
 * What the file actions answer: the payloads of `fs_read`, `fs_write` (whole writes
 * and the parts of an upload), `fs_list`, `fs_delete` and `promote_artifact`. The
 * workbench and a worker host answer with these, the API streams files as them and the
 * client reads them; they are defined here once.
 *
 * @module
 */

import type { PromotedArtifact, RefusedPath } from './wire-shapes.js';

/** The payload of a successful `fs_read`. */
export interface FsReadPayload {
  /** The workspace-relative path read. */
  readonly path: string;
  /**
   * How `content` is encoded: as asked, except that a `utf8` read of bytes that are not
   * UTF-8 answers `base64` (with `binary: true`) instead of replacement characters.
   */
  readonly encoding: 'utf8' | 'base64';
  /** True when `utf8` was asked for and the bytes were not UTF-8, so they came as base64. */
  readonly binary?: true;
  readonly content: string;
  /** Where the read began, in bytes. */
  readonly offset: number;
  readonly bytesRead: number;
  /** The whole file's size in bytes. */
  readonly size: number;
  /** Whether this read reached the end of the file. */
  readonly eof: boolean;
}

/** Where an upload stands after one of its parts. */
export interface UploadProgress {
  /** The upload's id, as the caller chose it. */
  readonly id: string;
  /** Bytes staged so far. */
  readonly staged: number;
  /** Whether the file is placed (the part marked `complete` was written). */
  readonly complete: boolean;
  /** True on the answer to a part that gave the upload up (`abort: true`). */
  readonly aborted?: boolean;
}

/**
 * The payload of an `fs_write` that wrote its file: a whole write, or the last part of
 * an upload (then with `upload`, `complete: true`). What `PUT /v1/runs/:runId/files`
 * answers.
 */
export interface FsWritePayload {
  /** The workspace-relative path written. */
  readonly path: string;
  readonly bytesWritten: number;
  /** The file's size after the write, in bytes. */
  readonly size: number;
  /** On an upload's last part: its id, the bytes staged, and `complete: true`. */
  readonly upload?: UploadProgress;
}

/**
 * The payload of an `fs_write` upload part that placed nothing yet: a part before the
 * last (`complete: false`), or one that gave the upload up (`aborted: true`).
 */
export interface FsUploadPartPayload {
  /** The path the upload will place its file at. */
  readonly path: string;
  readonly upload: UploadProgress;
}

/** One entry of an `fs_list` answer. */
export interface FsListEntry {
  /** Workspace-relative path. */
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  /** Bytes (for a symlink, the length of its target). */
  readonly size: number;
  /** Modification time, milliseconds since the epoch. */
  readonly mtimeMs: number;
}

/** The payload of a successful `fs_list`. */
export interface FsListPayload {
  /** The directory listed, workspace-relative (`.` for the root). */
  readonly path: string;
  readonly entries: readonly FsListEntry[];
  /** Whether more entries exist than were returned. */
  readonly truncated: boolean;
  /** Entries too deep to describe (host path over PATH_MAX); present only when some are. */
  readonly refused?: readonly RefusedPath[];
}

/** The payload of a successful `fs_delete`. */
export interface FsDeletePayload {
  /** The workspace-relative path deleted. */
  readonly path: string;
  readonly deleted: true;
  /** What it was. */
  readonly type: FsListEntry['type'];
}

/**
 * The payload of a successful `promote_artifact`; also each promoted expected output
 * of an `exec` (`ExecPayload.outputs[].artifact`).
 */
export type PromotePayload = PromotedArtifact;
