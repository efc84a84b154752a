/**
 * The S3 object store, for any S3-compatible service. Keys live under an optional
 * prefix in one bucket (`<prefix>/<key>`); listings strip it again.
 *
 * Bodies that fit in one part ({@link MULTIPART_PART_SIZE}) go up with one
 * PutObject; larger ones, including streams of unknown length that turn out
 * larger, go up as a multipart upload. Either way at most one part is in memory.
 *
 * Limits S3 imposes beyond the key rules: the 1024-byte key limit applies to the
 * prefix and key together (S3 refuses longer ones, surfacing as
 * `invalid_object_key`); `copy` is a single CopyObject, so objects over 5 GiB
 * cannot be copied; and a HEAD request carries no error body, so `head` against a
 * missing bucket reads as a missing object (every other call reports the bucket
 * as `object_store_unavailable`).
 *
 * @module
 */

import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  isObjectStoreError,
  ObjectNotFoundError,
  ObjectSizeMismatchError,
  ObjectStoreUnavailableError,
} from './errors.js';
import { validateListPrefix, validateObjectKey } from './object-key.js';
import type {
  ByteRange,
  ListObjectsOptions,
  ObjectInfo,
  ObjectListPage,
  ObjectStore,
  PutObjectOptions,
  PutObjectResult,
} from './object-store.js';
import { bodyParts } from './part-chunks.js';
import { deleteByListing } from './prefix-delete.js';
import { relayStream } from './relay-stream.js';
import { isUnsatisfiableRange, rethrowTranslated, translateS3Error } from './s3-errors.js';
import { uploadMultipart } from './s3-multipart.js';
import { checkByteRange, checkPutOptions, listLimit } from './store-arguments.js';

/** Size of each multipart part, and the largest body sent with one PutObject. */
export const MULTIPART_PART_SIZE = 8 * 1024 * 1024;

/** S3's most keys per ListObjectsV2 page and per DeleteObjects request. */
const S3_BATCH = 1000;

/** Options of {@link S3ObjectStore}. */
export interface S3ObjectStoreOptions {
  /** The bucket; it must exist. */
  bucket: string;
  /** Folder inside the bucket for every key (`memql/objects`); a `/` is added if missing. */
  prefix?: string;
}

/** An {@link ObjectStore} over an S3 bucket, talking through a client it is given. */
export class S3ObjectStore implements ObjectStore {
  readonly bucket: string;
  /** The normalised prefix: empty, or ending in `/`. */
  readonly prefix: string;

  constructor(
    private readonly client: S3Client,
    options: S3ObjectStoreOptions,
  ) {
    this.bucket = options.bucket;
    this.prefix = normalisePrefix(options.prefix ?? '');
  }

  async put(
    key: string,
    body: Uint8Array | Readable,
    opts?: PutObjectOptions,
  ): Promise<PutObjectResult> {
    validateObjectKey(key);
    checkPutOptions(opts);
    const parts = bodyParts(body, MULTIPART_PART_SIZE);
    const first = await parts.next();
    if (first.done) throw new Error('bodyParts always yields a last part');
    const target = {
      client: this.client,
      bucket: this.bucket,
      objectKey: this.objectKey(key),
      key,
      ...(opts?.contentType === undefined ? {} : { contentType: opts.contentType }),
      ...(opts?.contentLength === undefined ? {} : { expectedLength: opts.contentLength }),
    };
    if (!first.value.last) return { size: await uploadMultipart(target, first.value, parts) };
    const bytes = first.value.bytes;
    if (target.expectedLength !== undefined && bytes.length !== target.expectedLength) {
      throw new ObjectSizeMismatchError(key, target.expectedLength, bytes.length);
    }
    await this.client
      .send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: target.objectKey,
          Body: bytes,
          ContentLength: bytes.length,
          ...(target.contentType === undefined ? {} : { ContentType: target.contentType }),
        }),
      )
      .catch(rethrowTranslated(key));
    return { size: bytes.length };
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    validateObjectKey(key);
    checkByteRange(range);
    if (range?.length === 0) {
      if ((await this.head(key)) === null) throw new ObjectNotFoundError(key);
      return Readable.from([]);
    }
    const offset = range?.offset ?? 0;
    let response: GetObjectCommandOutput;
    try {
      response = await this.sendGet(key, range);
    } catch (err) {
      // S3 refuses a range starting at or past the end; the interface reads it as empty.
      if (range !== undefined && isUnsatisfiableRange(err)) return Readable.from([]);
      throw translateS3Error(err, key);
    }
    const body = response.Body;
    if (!(body instanceof Readable)) {
      throw new ObjectStoreUnavailableError(`S3 returned no body stream for "${key}"`);
    }
    // Some S3-compatible servers send more than the range asked for (or ignore it);
    // the Content-Range they answer with says where the bytes really start.
    const servedFrom = contentRangeStart(response.ContentRange) ?? 0;
    if (servedFrom > offset) {
      body.destroy();
      throw new ObjectStoreUnavailableError(
        `S3 answered a read of "${key}" from byte ${offset} with bytes from ${servedFrom}`,
      );
    }
    return relayStream(body, {
      skip: offset - servedFrom,
      ...(range?.length === undefined ? {} : { take: range.length }),
      mapError: (err) => translateS3Error(err, key),
    });
  }

  async head(key: string): Promise<ObjectInfo | null> {
    validateObjectKey(key);
    try {
      const response = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }),
      );
      return {
        key,
        size: response.ContentLength ?? 0,
        lastModified: response.LastModified ?? new Date(0),
      };
    } catch (err) {
      const translated = translateS3Error(err, key);
      if (isObjectStoreError(translated, 'object_not_found')) return null;
      throw translated;
    }
  }

  async list(prefix: string, opts?: ListObjectsOptions): Promise<ObjectListPage> {
    validateListPrefix(prefix);
    const limit = listLimit(opts?.limit);
    const items: ObjectInfo[] = [];
    let token: string | undefined;
    let truncated = false;
    do {
      const response = await this.client
        .send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + prefix,
            MaxKeys: Math.min(S3_BATCH, limit - items.length),
            // The cursor is the last key handed out; S3's own token only links the
            // requests that fill one page.
            ...(token !== undefined
              ? { ContinuationToken: token }
              : opts?.cursor !== undefined
                ? { StartAfter: this.prefix + opts.cursor }
                : {}),
          }),
        )
        .catch(rethrowTranslated());
      for (const object of response.Contents ?? []) {
        if (object.Key === undefined) continue;
        items.push({
          key: object.Key.slice(this.prefix.length),
          size: object.Size ?? 0,
          lastModified: object.LastModified ?? new Date(0),
        });
      }
      truncated = response.IsTruncated === true;
      token = response.NextContinuationToken;
    } while (truncated && token !== undefined && items.length < limit);
    const last = items[items.length - 1];
    return truncated && last !== undefined ? { items, nextCursor: last.key } : { items };
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (const key of keys) validateObjectKey(key);
    const unique = [...new Set(keys)];
    for (let start = 0; start < unique.length; start += S3_BATCH) {
      const batch = unique.slice(start, start + S3_BATCH);
      const response = await this.client
        .send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((key) => ({ Key: this.objectKey(key) })), Quiet: true },
          }),
        )
        .catch(rethrowTranslated());
      const failed = response.Errors ?? [];
      const first = failed[0];
      if (first !== undefined) {
        throw new ObjectStoreUnavailableError(
          `S3 did not delete ${failed.length} of ${batch.length} objects; first ` +
            `"${first.Key}": ${first.Code} ${first.Message}`,
        );
      }
    }
  }

  deletePrefix(prefix: string): Promise<number> {
    validateListPrefix(prefix);
    return deleteByListing(this, prefix);
  }

  async copy(srcKey: string, dstKey: string): Promise<void> {
    validateObjectKey(srcKey);
    validateObjectKey(dstKey);
    if (srcKey === dstKey) {
      // S3 refuses a copy onto itself; the object already is what was asked for.
      if ((await this.head(srcKey)) === null) throw new ObjectNotFoundError(srcKey);
      return;
    }
    await this.client
      .send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: this.objectKey(dstKey),
          CopySource: `${this.bucket}/${encodeCopySourceKey(this.objectKey(srcKey))}`,
        }),
      )
      .catch(rethrowTranslated(srcKey));
  }

  private sendGet(key: string, range: ByteRange | undefined): Promise<GetObjectCommandOutput> {
    return this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        // A range from byte 0 to the end is the whole object: no header needed.
        ...(range === undefined || (range.offset === 0 && range.length === undefined)
          ? {}
          : { Range: rangeHeader(range) }),
      }),
    );
  }

  private objectKey(key: string): string {
    return this.prefix + key;
  }
}

function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  validateListPrefix(`${trimmed}/`);
  return `${trimmed}/`;
}

function rangeHeader(range: ByteRange): string {
  const end = range.length === undefined ? '' : String(range.offset + range.length - 1);
  return `bytes=${range.offset}-${end}`;
}

/** The first byte of a `Content-Range: bytes <first>-<last>/<size>` header. */
function contentRangeStart(header: string | undefined): number | undefined {
  const match = header === undefined ? null : /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(header.trim());
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** CopySource is a URL path: each key segment encoded, the slashes kept. */
function encodeCopySourceKey(objectKey: string): string {
  return objectKey.split('/').map(encodeURIComponent).join('/');
}
