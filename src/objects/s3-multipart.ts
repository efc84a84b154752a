/**
 * Multipart upload of a body too large for one PUT, or of unknown length. Parts
 * go up one at a time, so memory holds one part. On any failure the upload is
 * aborted, so S3 does not keep (and bill for) the parts.
 *
 * @module
 */

import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { ObjectSizeMismatchError, ObjectStoreUnavailableError } from './errors.js';
import type { BodyPart } from './part-chunks.js';
import { rethrowTranslated } from './s3-errors.js';

/** S3 allows at most this many parts in one upload. */
const MAX_PARTS = 10_000;

/** What to upload and where. */
export interface MultipartTarget {
  client: S3Client;
  bucket: string;
  /** The key in the bucket, store prefix included. */
  objectKey: string;
  /** The key as the caller gave it, for errors. */
  key: string;
  contentType?: string;
  /** The declared length; a body of another length is aborted. */
  expectedLength?: number;
}

/**
 * Uploads `first` and the rest of `parts` as one object and returns its size.
 * Errors of the body propagate unchanged after the abort; S3 errors are translated.
 */
export async function uploadMultipart(
  target: MultipartTarget,
  first: BodyPart,
  parts: AsyncIterator<BodyPart>,
): Promise<number> {
  const { client, bucket, objectKey, key, expectedLength } = target;
  const created = await client
    .send(
      new CreateMultipartUploadCommand({
        Bucket: bucket,
        Key: objectKey,
        ...(target.contentType === undefined ? {} : { ContentType: target.contentType }),
      }),
    )
    .catch(rethrowTranslated(key));
  const uploadId = created.UploadId;
  if (uploadId === undefined) {
    throw new ObjectStoreUnavailableError(`S3 started an upload of "${key}" without an id`);
  }
  const scope = { Bucket: bucket, Key: objectKey, UploadId: uploadId };
  try {
    const completed: CompletedPart[] = [];
    let size = 0;
    let part = first;
    for (let partNumber = 1; ; partNumber++) {
      if (partNumber > MAX_PARTS) {
        throw new RangeError(`"${key}" needs more than ${MAX_PARTS} parts; S3 cannot store it`);
      }
      size += part.bytes.length;
      if (expectedLength !== undefined && size > expectedLength) {
        throw new ObjectSizeMismatchError(key, expectedLength, size);
      }
      const uploaded = await client
        .send(new UploadPartCommand({ ...scope, PartNumber: partNumber, Body: part.bytes }))
        .catch(rethrowTranslated(key));
      completed.push({ ETag: uploaded.ETag, PartNumber: partNumber });
      if (part.last) break;
      const next = await parts.next();
      if (next.done) break;
      part = next.value;
    }
    if (expectedLength !== undefined && size !== expectedLength) {
      throw new ObjectSizeMismatchError(key, expectedLength, size);
    }
    await client
      .send(new CompleteMultipartUploadCommand({ ...scope, MultipartUpload: { Parts: completed } }))
      .catch(rethrowTranslated(key));
    return size;
  } catch (err) {
    await Promise.resolve(parts.return?.()).catch(() => undefined);
    // Best effort: the original failure is what the caller needs, and parts an
    // abort misses are reclaimed by the bucket's lifecycle rule for incomplete uploads.
    await client.send(new AbortMultipartUploadCommand(scope)).catch(() => undefined);
    throw err;
  }
}
