/**
 * Builds the configured object store from plain options. Parsing settings from
 * the environment happens in config; this only turns the result into a store.
 *
 * @module
 */

import { FsObjectStore } from './fs-object-store.js';
import type { ObjectStore } from './object-store.js';
import { createS3Client } from './s3-client.js';
import { S3ObjectStore } from './s3-object-store.js';

/** A filesystem store under one directory (the embedded default). */
export interface FsObjectStoreSettings {
  kind: 'fs';
  /** Directory holding the store; created if missing. */
  baseDir: string;
}

/** An S3 (or S3-compatible) store in one bucket. */
export interface S3ObjectStoreSettings {
  kind: 's3';
  /** The bucket; it must exist. */
  bucket: string;
  /** Folder inside the bucket for every key; empty for the bucket root. */
  prefix: string;
  /** AWS region, or any region the S3-compatible service accepts. */
  region: string;
  /** Service URL for S3-compatible services; omitted means AWS. */
  endpoint?: string;
  /** Path-style bucket addressing, which most S3-compatible services need. */
  forcePathStyle?: boolean;
  /** Static access key id; give both or neither. Neither means the SDK's default chain. */
  accessKeyId?: string;
  /** Static secret access key; give both or neither. */
  secretAccessKey?: string;
}

/** Settings of the object store, by kind. */
export type ObjectStoreSettings = FsObjectStoreSettings | S3ObjectStoreSettings;

/**
 * Builds the object store the settings describe. An S3 store gets a client of its
 * own, which lives as long as the process.
 */
export function createObjectStore(settings: ObjectStoreSettings): ObjectStore {
  switch (settings.kind) {
    case 'fs':
      return new FsObjectStore({ baseDir: settings.baseDir });
    case 's3': {
      const { accessKeyId, secretAccessKey } = settings;
      if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
        throw new TypeError('S3 object store: give accessKeyId and secretAccessKey together');
      }
      const client = createS3Client({
        region: settings.region,
        ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
        ...(settings.forcePathStyle === undefined
          ? {}
          : { forcePathStyle: settings.forcePathStyle }),
        ...(accessKeyId === undefined || secretAccessKey === undefined
          ? {}
          : { credentials: { accessKeyId, secretAccessKey } }),
      });
      return new S3ObjectStore(client, { bucket: settings.bucket, prefix: settings.prefix });
    }
  }
}
