/**
 * Builds the S3 client an `S3ObjectStore` talks through. Kept apart from the
 * store so tests and callers can hand the store a client of their own.
 *
 * @module
 */

import { S3Client } from '@aws-sdk/client-s3';

/** Options of {@link createS3Client}. */
export interface S3ClientOptions {
  /** AWS region, or any region the S3-compatible service accepts (`us-east-1`). */
  region: string;
  /** Service URL for S3-compatible services (`http://minio:9000`); omitted means AWS. */
  endpoint?: string;
  /** Address buckets as `<endpoint>/<bucket>` rather than `<bucket>.<endpoint>`. */
  forcePathStyle?: boolean;
  /**
   * Static credentials. Omitted means the SDK's default provider chain (instance
   * or pod role, shared files), which the SDK resolves on its own.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Time to establish a connection, in ms. Default 5000. */
  connectionTimeoutMs?: number;
  /**
   * Time a request's connection may carry no bytes in either direction, in ms,
   * response body included. Default 30000. An idle limit rather than a total one,
   * so large objects on slow links still go through.
   */
  socketTimeoutMs?: number;
  /** Attempts per request, including the first; the SDK backs off between them. Default 3. */
  maxAttempts?: number;
}

/** A new S3 client for the object store. The caller owns it and `destroy()`s it. */
export function createS3Client(options: S3ClientOptions): S3Client {
  return new S3Client({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle ?? false,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    maxAttempts: options.maxAttempts ?? 3,
    // Without timeouts a silent server would hang a call forever instead of
    // surfacing as object_store_unavailable.
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 5_000,
      socketTimeout: options.socketTimeoutMs ?? 30_000,
    },
    // Checksums only where S3 requires them: many S3-compatible services reject
    // the trailing checksums the SDK otherwise adds to every upload.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
