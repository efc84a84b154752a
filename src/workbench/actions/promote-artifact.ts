/**
 * `promote_artifact`: copies one workspace file into managed artifact storage and
 * records it for the run's owner. Promoted artifacts are the only files an end user
 * can download; the workspace itself and command logs never are.
 *
 * The bytes go to `artifacts/<artifactId>` in the object store, outside every run's
 * `runs/<runId>/` workspace prefix, so workspace sync and eviction never touch them.
 * Deleting the run withdraws them (see `deleteRunData`). The expected outputs of an
 * `exec` are promoted by the same {@link storeArtifact}, their rows recorded by the
 * command's finish (`expected-outputs.ts`).
 *
 * @module
 */

import { createHash, randomUUID } from 'node:crypto';
import { extname } from 'node:path';
import { Transform } from 'node:stream';
import {
  type ActionArgs,
  type PromotedArtifact,
  type PromotePayload,
  WorkbenchError,
} from '../../contract/index.js';
import { type FileContext, openForRead } from '../../files/index.js';
import type { ObjectStore } from '../../objects/index.js';
import { type Db, type NewArtifact, type Run, recordArtifacts } from '../../store/index.js';

/** Largest file that can be promoted, bytes. */
export const MAX_ARTIFACT_BYTES = 1024 * 1024 * 1024;

export type { PromotePayload };

/** A promotion whose bytes are stored and whose row is not yet recorded. */
export interface StoredArtifact {
  /** The row to record (with `recordArtifacts`, or with a command's finish). */
  row: NewArtifact;
  /** What the promotion answers once the row is recorded. */
  payload: PromotedArtifact;
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
  // Office documents: what the runner image's LibreOffice and python-docx make.
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.doc': 'application/msword',
  '.xls': 'application/vnd.ms-excel',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.odp': 'application/vnd.oasis.opendocument.presentation',
  '.rtf': 'application/rtf',
  '.epub': 'application/epub+zip',
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
 * Stores the bytes of workspace file `args.path` as a new artifact of `run` (its owner
 * is the run's, never a caller's claim), read once and hashed as it streams into the
 * object store, and returns the row to record. Refused like any file action: a path
 * that escapes the workspace (`..`, absolute, a symlink out), anything but a regular
 * file (`invalid_path`), nothing there (`path_not_found`), or over
 * {@link MAX_ARTIFACT_BYTES} (`payload_too_large`). Until the row is recorded the
 * bytes are garbage no one can reach.
 */
export async function storeArtifact(
  objects: ObjectStore,
  files: FileContext,
  run: Pick<Run, 'id' | 'ownerUserId'>,
  args: Pick<ActionArgs<'promote_artifact'>, 'path' | 'name' | 'contentType'>,
): Promise<StoredArtifact> {
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
    await objects.put(key, body, { contentType, contentLength: size });
  } finally {
    await handle.close();
  }
  const sha256 = hash.digest('hex');
  return {
    row: {
      id: artifactId,
      runId: run.id,
      ownerUserId: run.ownerUserId,
      name: args.name,
      contentType,
      size,
      hash: sha256,
      objectKey: key,
      sourcePath: target.rel,
    },
    payload: {
      artifactId,
      name: args.name,
      contentType,
      size,
      sha256,
      path: target.rel,
      runId: run.id,
    },
  };
}

/**
 * `promote_artifact`: stores `args.path` of the run's (already reconciled) workspace
 * ({@link storeArtifact}), then records it with its `artifact.promoted` audit event in
 * one statement. If recording fails, the stored bytes are removed.
 */
export async function promoteArtifact(
  deps: { db: Db; objects: ObjectStore },
  files: FileContext,
  run: Run,
  args: ActionArgs<'promote_artifact'>,
): Promise<PromotePayload> {
  const stored = await storeArtifact(deps.objects, files, run, args);
  try {
    await recordArtifacts(deps.db, [stored.row]);
  } catch (err) {
    await deps.objects.deleteMany([stored.row.objectKey]).catch(() => {});
    throw err;
  }
  return stored.payload;
}
