/**
 * `promote_artifact`: copies one workspace file into managed artifact storage and
 * records it for the run's owner. Promoted artifacts are the only files an end user
 * can download; the workspace itself and command logs never are.
 *
 * The bytes go to `artifacts/<artifactId>` in the object store, outside every run's
 * `runs/<runId>/` workspace prefix, so workspace sync and eviction never touch them.
 * Deleting the run withdraws them (see `deleteRunData`).
 *
 * @module
 */

import { createHash, randomUUID } from 'node:crypto';
import { extname } from 'node:path';
import { Transform } from 'node:stream';
import { type ActionArgs, WorkbenchError } from '../../contract/index.js';
import type { ObjectStore } from '../../objects/index.js';
import { type Db, insertArtifact, insertAuditEvent, type Run } from '../../store/index.js';
import { type FileContext, openForRead } from './files.js';

/** Largest file that can be promoted, bytes. */
export const MAX_ARTIFACT_BYTES = 1024 * 1024 * 1024;

/** What a promotion answers. */
export interface PromotePayload {
  artifactId: string;
  name: string;
  contentType: string;
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  /** The workspace path the bytes came from. */
  path: string;
  runId: string;
}

/** Content types by extension, for a promotion that names none. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.py': 'text/x-python; charset=utf-8',
  '.sh': 'text/x-shellscript; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.tar': 'application/x-tar',
  '.gz': 'application/gzip',
  '.tgz': 'application/gzip',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

/** The content type of a file name: by extension, else `application/octet-stream`. */
export function contentTypeFor(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** The object key of an artifact's bytes. */
export function artifactObjectKey(artifactId: string): string {
  return `artifacts/${artifactId}`;
}

/**
 * Promotes `args.path` of the run's (already reconciled) workspace. The file is read
 * once, hashed as it streams into the object store, then recorded with the run's
 * owner (never a caller's claim) with an `artifact.promoted` audit event in the same
 * transaction. If recording fails, the stored bytes are removed.
 */
export async function promoteArtifact(
  deps: { db: Db; objects: ObjectStore },
  files: FileContext,
  run: Run,
  args: ActionArgs<'promote_artifact'>,
): Promise<PromotePayload> {
  const { target, handle, size } = await openForRead(files, args.path);
  const artifactId = `art_${randomUUID()}`;
  const key = artifactObjectKey(artifactId);
  const contentType = args.contentType ?? contentTypeFor(args.name);
  const hash = createHash('sha256');
  try {
    if (size > MAX_ARTIFACT_BYTES) {
      throw new WorkbenchError(
        'payload_too_large',
        `payload_too_large: "${target.rel}" is ${size} bytes; the largest artifact is ${MAX_ARTIFACT_BYTES}`,
        { path: target.rel, size, limit: MAX_ARTIFACT_BYTES },
      );
    }
    const hashing = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const body = handle.createReadStream({ autoClose: false }).pipe(hashing);
    await deps.objects.put(key, body, { contentType, contentLength: size });
  } finally {
    await handle.close();
  }
  const sha256 = hash.digest('hex');
  try {
    await deps.db.transaction(async (tx) => {
      await insertArtifact(tx, {
        id: artifactId,
        runId: run.id,
        ownerUserId: run.ownerUserId,
        name: args.name,
        contentType,
        size,
        hash: sha256,
        objectKey: key,
        sourcePath: target.rel,
      });
      // Ids and sizes only: names and paths are the user's data, not the operator's.
      await insertAuditEvent(tx, {
        eventType: 'artifact.promoted',
        runId: run.id,
        ownerUserId: run.ownerUserId,
        metadata: { artifactId, size, contentType },
      });
    });
  } catch (err) {
    await deps.objects.deleteMany([key]).catch(() => {});
    throw err;
  }
  return {
    artifactId,
    name: args.name,
    contentType,
    size,
    sha256,
    path: target.rel,
    runId: run.id,
  };
}
