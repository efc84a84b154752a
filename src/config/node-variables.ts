/**
 * The node's identity and logs, and where it keeps its rows and bytes: the database and
 * the object store (a directory, or an S3 bucket). Part of `CONFIG_VARIABLES`
 * (`variables.ts`), in the order the table lists them.
 *
 * @module
 */

import type { ConfigVariable } from './config-variable.js';

/** The variables of this part of the registry. */
export const NODE_VARIABLES = [
  {
    name: 'MEMQL_NODE_ID',
    default: 'local',
    defaultText: 'the host name the binary passes in, else `local`',
    type: 'node id (letters, digits, `.`, `_`, `-`; at most 128)',
    description:
      "This node's id in the mesh. Stamped on the workspace rows it owns, so it must be stable across restarts of the same replica (a StatefulSet pod name is).",
  },
  {
    name: 'MEMQL_LOG_LEVEL',
    default: 'info',
    type: 'fatal, error, warn, info, debug, trace or silent',
    description: 'Minimum level of structured (pino) log lines.',
  },
  {
    name: 'MEMQL_LOG_FORMAT',
    default: 'auto',
    type: '`auto`, `json` or `pretty`',
    description:
      'How log lines are written: `json` (one JSON object a line, for collectors), `pretty` (a short line a record, for people), or `auto`: `pretty` when standard output is a terminal, else `json`.',
  },
  {
    name: 'MEMQL_WORKBENCH_ROOT',
    default: '/var/lib/memql/workbenches',
    type: 'absolute path',
    description: 'Directory holding one workspace directory per run, `<root>/<runId>/`.',
  },
  {
    name: 'MEMQL_DATA_DIR',
    default: '/var/lib/memql/data',
    type: 'path (relative resolves against the working directory the binary passes)',
    description:
      'Home of the embedded defaults: the PGlite database (`<dir>/pglite`) and filesystem objects (`<dir>/objects`). The local binary defaults it to `./.data`.',
  },
  {
    name: 'MEMQL_DATABASE_URL',
    default: undefined,
    defaultText: 'unset: embedded PGlite in `<MEMQL_DATA_DIR>/pglite`',
    type: '`postgres://` or `postgresql://` URL',
    description:
      'Postgres server for all rows. Its password is redacted whenever config is logged or quoted in an error.',
  },
  {
    name: 'MEMQL_OBJECT_STORE',
    default: 'fs',
    type: '`fs` or `s3`',
    description: 'Where file bytes are kept durably.',
  },
  {
    name: 'MEMQL_OBJECT_STORE_DIR',
    default: undefined,
    defaultText: '`<MEMQL_DATA_DIR>/objects`',
    type: 'path',
    description: 'Base directory of the `fs` object store. Setting it with `s3` is an error.',
  },
  {
    name: 'MEMQL_S3_BUCKET',
    default: undefined,
    defaultText: 'unset (required with `s3`)',
    type: 'bucket name, 3 to 63 characters',
    description: 'Bucket of the `s3` object store. Any `MEMQL_S3_*` set with `fs` is an error.',
  },
  {
    name: 'MEMQL_S3_ENDPOINT',
    default: undefined,
    defaultText: 'unset: AWS',
    type: '`http://` or `https://` URL',
    description: 'Endpoint of an S3-compatible server such as MinIO.',
  },
  {
    name: 'MEMQL_S3_REGION',
    default: 'us-east-1',
    type: 'region name',
    description: 'Region used to sign S3 requests.',
  },
  {
    name: 'MEMQL_S3_PREFIX',
    default: '',
    defaultText: 'empty',
    type: 'key prefix; a trailing `/` is added',
    description: 'Prefix of every object key, to share a bucket.',
  },
  {
    name: 'MEMQL_S3_FORCE_PATH_STYLE',
    default: 'false',
    type: 'boolean',
    description:
      'Address the bucket in the path rather than the host name (most S3-compatible servers need it).',
  },
  {
    name: 'MEMQL_S3_ACCESS_KEY_ID',
    default: undefined,
    defaultText: 'unset: the SDK credential chain',
    type: 'string',
    description: 'S3 access key id; set together with `MEMQL_S3_SECRET_ACCESS_KEY` or not at all.',
  },
  {
    name: 'MEMQL_S3_SECRET_ACCESS_KEY',
    default: undefined,
    defaultText: 'unset: the SDK credential chain',
    type: 'string',
    description: 'S3 secret access key; set together with `MEMQL_S3_ACCESS_KEY_ID` or not at all.',
    secret: true,
  },
] as const satisfies readonly ConfigVariable[];
