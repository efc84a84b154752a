import type { ObjectStoreConfig } from '../config/index.js';
import type { ObjectStoreSettings } from './create-object-store.js';

/** The object store settings of a node's configuration (`MEMQL_OBJECT_STORE*`, `MEMQL_S3_*`). */
export function objectStoreSettings(config: ObjectStoreConfig): ObjectStoreSettings {
  if (config.kind === 'fs') return config;
  return {
    kind: 's3',
    bucket: config.bucket,
    prefix: config.prefix,
    region: config.region,
    forcePathStyle: config.forcePathStyle,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.accessKeyId && config.secretAccessKey
      ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
      : {}),
  };
}
