/**
 * `PUT` and `GET /v1/runs/:runId/files?path=`: a workspace file as a byte stream,
 * of any size up to the upload limit (`MAX_UPLOAD_BYTES`) and the workspace quota.
 *
 * Both are made of ordinary `workbenchHost` calls with the caller's own authority, so
 * routing, ownership, limits and audit are the dispatch path's. A `PUT` body is sent
 * on as `fs_write` upload parts of {@link UPLOAD_PART_BYTES}: staged out of sight on
 * the run's replica and placed at the path in one rename by the last part, then
 * synced to durable storage before the answer, so a failed or cut upload leaves no
 * file and changes nothing. A `GET` reads `fs_read` ranges of
 * {@link DOWNLOAD_PART_BYTES}; a file that changes size while it is read cuts the
 * answer short (the connection is closed before `content-length` bytes), never
 * splices two versions silently.
 *
 * The calls are recorded with the caller's `?agentId=&taskId=` (default `api` and
 * `files`), as a dispatch records its envelope's.
 *
 * Refusals are the dispatch result (`{ok: false, errorCode, message}`) with its code's
 * HTTP status (the error table's, as on every route): 404 for a run that is not the
 * caller's or a missing path, 413 for a size limit or the quota, 503 when the
 * workbench or a store it needs is unreachable.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { type DispatchFailure, errorResult } from '../contract/index.js';
import type { RouteContext } from './api-deps.js';
import { invalidField } from './http-errors.js';
import { sendJson, sendRefusal } from './http-io.js';
import { call, callerGone, requireOwnRun } from './run-calls.js';

/** Bytes of one upload part: 8 MiB (about 11 MB of base64 on the wire). */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

/** Bytes of one read of a download: 4 MiB, under the workbench's `fs_read` limit. */
export const DOWNLOAD_PART_BYTES = 4 * 1024 * 1024;

/** The route's run (the caller's, else 404) and file path (`?path=`, required). */
async function target(ctx: RouteContext): Promise<{ runId: string; path: string }> {
  const runId = ctx.params[0]!;
  const path = ctx.query.get('path');
  if (path === null || path === '') {
    throw invalidField('path', 'required: the workspace-relative file, as ?path=');
  }
  await requireOwnRun(ctx, runId);
  return { runId, path };
}

/**
 * `PUT /v1/runs/:runId/files?path=&mode=`: the body becomes the file, whole or not at
 * all. An upload that does not complete (a part refused or failed, the caller gone
 * before the end of its body) is aborted on the workbench before the route answers,
 * so its staged bytes do not wait there for the sweep.
 */
export async function putFileRoute(ctx: RouteContext): Promise<void> {
  const { runId, path } = await target(ctx);
  const mode = ctx.query.get('mode');
  const declared = Number(ctx.req.headers['content-length'] ?? Number.NaN);
  const signal = callerGone(ctx);
  const id = randomUUID();
  let offset = 0;
  const send = (part: Buffer, complete: boolean) =>
    call(
      ctx,
      {
        runId,
        action: 'fs_write',
        args: {
          path,
          content: part.toString('base64'),
          encoding: 'base64',
          ...(mode !== null ? { mode } : {}),
          upload: {
            id,
            offset,
            complete,
            ...(complete && Number.isFinite(declared) ? { size: declared } : {}),
          },
        },
      },
      signal,
    );
  // Not under the caller's signal: a caller that went away is the reason for it.
  const abort = async () => {
    const result = await call(
      ctx,
      {
        runId,
        action: 'fs_write',
        args: { path, content: '', upload: { id, offset: 0, abort: true } },
      },
      new AbortController().signal,
    );
    if (!result.ok) {
      ctx.log.info(
        { runId, errorCode: result.errorCode },
        'an unfinished upload could not be aborted; its stage goes with the sweep',
      );
    }
  };
  let sent = false;
  let placed = false;
  try {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let refused: DispatchFailure | null = null;
    for await (const chunk of ctx.req) {
      // After a refusal the rest of the body is read and dropped, so the caller, still
      // sending, gets the answer rather than a reset connection.
      if (refused) continue;
      const bytes = chunk as Buffer;
      pending.push(bytes);
      pendingBytes += bytes.length;
      while (pendingBytes >= UPLOAD_PART_BYTES && !refused) {
        const all = Buffer.concat(pending, pendingBytes);
        const part = all.subarray(0, UPLOAD_PART_BYTES);
        sent = true;
        const result = await send(part, false);
        if (!result.ok) refused = result;
        offset += part.length;
        pending = [all.subarray(UPLOAD_PART_BYTES)];
        pendingBytes = pending[0]!.length;
      }
    }
    if (refused) {
      await abort();
      sent = false;
      return sendRefusal(ctx.res, refused);
    }
    sent = true;
    const result = await send(Buffer.concat(pending, pendingBytes), true);
    placed = result.ok;
    if (!result.ok) {
      await abort();
      sent = false;
      return sendRefusal(ctx.res, result);
    }
    sendJson(ctx.res, 200, result);
  } finally {
    // The body broke off (the caller went away): nothing will complete the upload.
    if (sent && !placed) await abort();
  }
}

/** `GET /v1/runs/:runId/files?path=`: the file's bytes. */
export async function getFileRoute(ctx: RouteContext): Promise<void> {
  const { runId, path } = await target(ctx);
  const signal = callerGone(ctx);
  const { res } = ctx;
  let offset = 0;
  let size: number | null = null;
  let length = DOWNLOAD_PART_BYTES;
  while (size === null || offset < size) {
    const result = await call(
      ctx,
      { runId, action: 'fs_read', args: { path, encoding: 'base64', offset, length } },
      signal,
    );
    // A node that reads less per call says how much: the parts follow its limit.
    const limit = (result as { payload?: { limit?: unknown } }).payload?.limit;
    if (!result.ok && result.errorCode === 'payload_too_large' && typeof limit === 'number') {
      if (limit > 0 && limit < length) {
        length = limit;
        continue;
      }
    }
    if (signal.aborted) return;
    if (!result.ok) return sendRefusal(res, result);
    const read = result.payload as { content: string; size: number; bytesRead: number };
    if (size === null) {
      size = read.size;
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': size,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      });
      if (size === 0) break;
    } else if (read.size !== size || read.bytesRead === 0) {
      ctx.log.warn(
        { runId, size, now: read.size, offset },
        'a file changed size while it was downloaded: the answer is cut short',
      );
      return sendRefusal(
        res,
        errorResult('invalid_arguments', 'invalid_arguments: the file changed while it was read'),
      );
    }
    offset += read.bytesRead;
    if (!res.write(Buffer.from(read.content, 'base64'))) {
      await new Promise<void>((resolve) => {
        res.once('drain', resolve);
        res.once('close', resolve);
      });
    }
  }
  res.end();
}
