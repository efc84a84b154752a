/**
 * The object store: durable bytes under string keys. The workbench keeps file
 * contents here and their metadata in the manifest, so a substitute replica can
 * hydrate a workspace after the original is lost.
 *
 * Two implementations: `FsObjectStore` (a directory; the embedded default) and
 * `S3ObjectStore` (any S3-compatible service). Both follow the key rules in
 * `object-key.ts` and behave the same for every operation below; the conformance
 * suite in `test/objects/` holds them to it.
 *
 * @module
 */

import type { Readable } from 'node:stream';

/** Options of {@link ObjectStore.put}. */
export interface PutObjectOptions {
  /** MIME type recorded with the object where the store keeps one (S3). */
  contentType?: string;
  /**
   * The body's length in bytes, when known. If the body turns out longer or shorter,
   * `put` fails with `object_size_mismatch` and stores nothing, so a truncated
   * upload never passes for a whole one.
   */
  contentLength?: number;
}

/** What {@link ObjectStore.put} stored. */
export interface PutObjectResult {
  /** Bytes stored. */
  size: number;
}

/**
 * A byte range of an object. Reading past the end is not an error: the result is
 * cut at the end of the object, and is empty when `offset` is at or past it.
 */
export interface ByteRange {
  /** First byte to read, from 0. */
  offset: number;
  /** Bytes to read from `offset`; omitted means to the end. */
  length?: number;
}

/** An object's listing entry. */
export interface ObjectInfo {
  /** The key, without any store-level prefix. */
  key: string;
  /** Size in bytes. */
  size: number;
  /** When the object was last written. S3 keeps whole seconds. */
  lastModified: Date;
}

/** Options of {@link ObjectStore.list}. */
export interface ListObjectsOptions {
  /** A `nextCursor` from the previous page; the listing continues after it. */
  cursor?: string;
  /** Most items in the page, at least 1. Default {@link DEFAULT_LIST_LIMIT}. */
  limit?: number;
}

/** One page of a listing. */
export interface ObjectListPage {
  /** Objects in key order (UTF-8 byte order, as S3 lists). */
  items: ObjectInfo[];
  /** Present when more objects may follow; pass it back as `cursor`. */
  nextCursor?: string;
}

/** Page size of {@link ObjectStore.list} when no limit is given (S3's page size). */
export const DEFAULT_LIST_LIMIT = 1000;

/**
 * Durable bytes under string keys. Keys that break the key rules are refused with
 * `invalid_object_key` before any I/O. Failures of the backing store surface as
 * `object_store_unavailable`; errors raised by a caller's body stream are passed
 * through unchanged.
 */
export interface ObjectStore {
  /**
   * Stores `body` under `key`, replacing any object there. Readers see the old
   * object or the new one, never a part. Streams are not buffered whole: memory
   * stays bounded (one multipart part, 8 MiB, for S3). If the body fails, nothing
   * is stored and the body's error is rethrown.
   */
  put(key: string, body: Uint8Array | Readable, opts?: PutObjectOptions): Promise<PutObjectResult>;

  /**
   * Opens the object (or a range of it) as a stream. Throws `object_not_found`
   * before returning if there is no object under `key`.
   */
  get(key: string, range?: ByteRange): Promise<Readable>;

  /** Size and modification time of the object, or `null` if there is none. */
  head(key: string): Promise<ObjectInfo | null>;

  /**
   * One page of the objects whose keys start with `prefix` (a plain string
   * prefix, not a directory: `a/b` matches `a/bc`), in key order. A page can be
   * short or empty only at the end; when `nextCursor` is absent the listing is done.
   */
  list(prefix: string, opts?: ListObjectsOptions): Promise<ObjectListPage>;

  /**
   * Deletes the objects under `keys`. Keys with no object are fine. All keys are
   * checked before anything is deleted; the deletions themselves are not one
   * atomic step.
   */
  deleteMany(keys: string[]): Promise<void>;

  /**
   * Deletes every object whose key starts with `prefix` and returns how many there
   * were. Objects put under the prefix while it runs may survive it.
   */
  deletePrefix(prefix: string): Promise<number>;

  /**
   * Copies the object under `srcKey` to `dstKey`, replacing any object there.
   * Throws `object_not_found` (naming `srcKey`) if the source is missing.
   */
  copy(srcKey: string, dstKey: string): Promise<void>;
}
