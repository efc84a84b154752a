/**
 * The object store part: durable bytes under string keys, on a local directory or
 * in S3. See `object-store.ts` for the contract.
 *
 * ```ts
 * const objects = createObjectStore(config.objectStore);
 * await objects.put(key, bytes);
 * const body = await objects.get(key);
 * ```
 *
 * @module
 */

export {
  createObjectStore,
  type FsObjectStoreSettings,
  type ObjectStoreSettings,
  type S3ObjectStoreSettings,
} from './create-object-store.js';
export {
  InvalidObjectKeyError,
  isObjectStoreError,
  ObjectKeyConflictError,
  ObjectNotFoundError,
  ObjectSizeMismatchError,
  ObjectStoreError,
  type ObjectStoreErrorCode,
  ObjectStoreUnavailableError,
} from './errors.js';
export { FsObjectStore, type FsObjectStoreOptions } from './fs-object-store.js';
export { getBytes, readAll } from './get-bytes.js';
export {
  compareObjectKeys,
  MAX_OBJECT_KEY_BYTES,
  validateListPrefix,
  validateObjectKey,
} from './object-key.js';
export {
  type ByteRange,
  DEFAULT_LIST_LIMIT,
  type ListObjectsOptions,
  type ObjectInfo,
  type ObjectListPage,
  type ObjectStore,
  type PutObjectOptions,
  type PutObjectResult,
} from './object-store.js';
export { createS3Client, type S3ClientOptions } from './s3-client.js';
export {
  MULTIPART_PART_SIZE,
  S3ObjectStore,
  type S3ObjectStoreOptions,
} from './s3-object-store.js';
export { objectStoreSettings } from './store-settings.js';
