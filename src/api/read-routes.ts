/**
 * The caller's reads: who the token speaks for, a command by id, workspaces,
 * promoted artifacts (list and download), and the fleet. There is deliberately no route to workspace files or
 * command logs beyond the caller's own command result: end users receive promoted
 * artifacts only.
 *
 * @module
 */

import type { Readable } from 'node:stream';
import type { FleetView, MeAnswer, WorkspacePage } from '../contract/index.js';
import { isObjectStoreError } from '../objects/index.js';
import {
  type Db,
  findRemovedCommand,
  getArtifactForOwner,
  getCommand,
  listArtifactsForOwner,
  listWorkspacesForOwner,
  ownsWorkspace,
} from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { ApiError, invalidField } from './http-errors.js';
import { sendJson } from './http-io.js';
import { listLimit, oneParam } from './page-query.js';
import { artifactView, commandView, workspaceView } from './views.js';
import { callerWorkers } from './worker-directory.js';

/**
 * `GET /v1/me`: the token's user and kind, so the console can say whether it may
 * decide consent (a person token) or only look and turn the kill switch on (an agent
 * token). Never the token's id or secret.
 */
export async function meRoute(ctx: RouteContext): Promise<void> {
  const answer: MeAnswer = { userId: ctx.caller.userId, tokenKind: ctx.caller.tokenKind };
  sendJson(ctx.res, 200, answer);
}

/** `GET /v1/commands/:commandId`: another user's command reads as absent. */
export async function getCommandRoute(ctx: RouteContext): Promise<void> {
  const id = ctx.params[0]!;
  const command = await getCommand(ctx.deps.db, id);
  if (command === null || command.ownerUserId !== ctx.caller.userId) {
    throw await commandAbsent(ctx.deps.db, id, ctx.caller.userId);
  }
  sendJson(ctx.res, 200, { command: commandView(command) });
}

/**
 * The refusal of a command id with no row of the caller's: `command_expired` when its
 * audit events show it was the caller's and retention removed it, else `not_found`.
 */
export async function commandAbsent(db: Db, id: string, userId: string): Promise<ApiError> {
  const removed = await findRemovedCommand(db, id);
  if (removed !== null && removed.ownerUserId === userId) {
    return new ApiError(
      'command_expired',
      `command_expired: command "${id}" finished longer ago than this deployment keeps command results (MEMQL_COMMAND_KEEP_MS), and its record was removed; its output and exit code are gone. Run the command again (with a new callId) if you need its result`,
    );
  }
  return new ApiError('not_found', `not_found: command "${id}" does not exist`);
}

function booleanParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw invalidField(name, 'expected true or false');
}

/** Workspaces a page holds when `limit` is not given. */
const WORKSPACE_PAGE_DEFAULT = 200;

/**
 * `GET /v1/workspaces?includeReleased=&limit=&before=`: the caller's workspaces only,
 * newest first, a page at a time; `nextBefore` is the id to pass as `before` for the
 * next (older) page, or null on the last.
 */
export async function listWorkspacesRoute(ctx: RouteContext): Promise<void> {
  const includeReleased = booleanParam(ctx.query, 'includeReleased');
  const limit = ctx.query.has('limit') ? listLimit(ctx.query) : WORKSPACE_PAGE_DEFAULT;
  const before = oneParam(ctx.query, 'before');
  const db = ctx.deps.db;
  const owner = ctx.caller.userId;
  // One row past the page says whether another page follows.
  const rows = await listWorkspacesForOwner(db, owner, {
    includeReleased,
    limit: limit + 1,
    ...(before === undefined ? {} : { before }),
  });
  if (rows.length === 0 && before !== undefined && !(await ownsWorkspace(db, owner, before))) {
    throw invalidField(
      'before',
      `"${before}" is not one of your workspaces; pass the nextBefore of the previous page`,
    );
  }
  const page = rows.slice(0, limit);
  const answer: WorkspacePage = {
    workspaces: page.map(workspaceView),
    nextBefore: rows.length > limit ? page[page.length - 1]!.id : null,
  };
  sendJson(ctx.res, 200, answer);
}

/** `GET /v1/artifacts?runId=`: the caller's promoted artifacts, newest first. */
export async function listArtifactsRoute(ctx: RouteContext): Promise<void> {
  const runId = ctx.query.get('runId');
  if (runId !== null && runId.length === 0) throw invalidField('runId', 'expected a run id');
  const rows = await listArtifactsForOwner(ctx.deps.db, ctx.caller.userId, {
    ...(runId === null ? {} : { runId }),
  });
  sendJson(ctx.res, 200, { artifacts: rows.map(artifactView) });
}

async function ownArtifact(ctx: RouteContext) {
  const id = ctx.params[0]!;
  const artifact = await getArtifactForOwner(ctx.deps.db, id, ctx.caller.userId);
  if (artifact === null) {
    throw new ApiError('not_found', `not_found: artifact "${id}" does not exist`);
  }
  return artifact;
}

/** `GET /v1/artifacts/:id`: one artifact's record. */
export async function getArtifactRoute(ctx: RouteContext): Promise<void> {
  sendJson(ctx.res, 200, { artifact: artifactView(await ownArtifact(ctx)) });
}

/** `Content-Disposition` for a download: an ASCII fallback and the exact UTF-8 name. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const exact = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/**
 * The byte range of a `Range` header over an object of `size` bytes: one range of
 * `bytes=a-b`, `bytes=a-` or `bytes=-n`. `null` means serve the whole object (no
 * header, or a form this server does not do, such as several ranges);
 * `'unsatisfiable'` is a 416.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * `GET /v1/artifacts/:id/content`: the bytes, streamed from the object store. One
 * byte range (`Range: bytes=...`) is served as a 206, so a download can resume.
 */
export async function artifactContentRoute(ctx: RouteContext): Promise<void> {
  const artifact = await ownArtifact(ctx);
  const range = parseRange(ctx.req.headers.range, artifact.size);
  if (range === 'unsatisfiable') {
    ctx.res.setHeader('content-range', `bytes */${artifact.size}`);
    throw new ApiError(
      'invalid_arguments',
      `invalid_arguments: range: outside the artifact's ${artifact.size} bytes`,
      { status: 416 },
    );
  }
  let body: Readable;
  try {
    body = await ctx.deps.objects.get(
      artifact.objectKey,
      range ? { offset: range.start, length: range.end - range.start + 1 } : undefined,
    );
  } catch (err) {
    if (isObjectStoreError(err, 'object_not_found')) {
      ctx.log.error(
        { artifactId: artifact.id },
        'artifact bytes are missing from the object store',
      );
      throw new ApiError('not_found', `not_found: the bytes of artifact "${artifact.id}" are gone`);
    }
    throw err;
  }
  const { res } = ctx;
  res.writeHead(range ? 206 : 200, {
    'content-type': artifact.contentType,
    'content-length': range ? range.end - range.start + 1 : artifact.size,
    ...(range ? { 'content-range': `bytes ${range.start}-${range.end}/${artifact.size}` } : {}),
    'accept-ranges': 'bytes',
    'content-disposition': contentDisposition(artifact.name),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    etag: `"${artifact.hash}"`,
    'cache-control': 'private, no-store',
  });
  await new Promise<void>((resolve) => {
    body.on('error', (err) => {
      ctx.log.error({ err, artifactId: artifact.id }, 'artifact download failed midway');
      res.destroy();
      resolve();
    });
    res.on('close', () => {
      body.destroy();
      resolve();
    });
    body.pipe(res);
  });
}

/**
 * `GET /v1/fleet/workbenches`: the replicas the caller's calls can reach, and beside
 * them the caller's own worker hosts (never anyone else's).
 */
export async function fleetRoute(ctx: RouteContext): Promise<void> {
  const [fleet, mine] = await Promise.all([
    ctx.deps.fleet(),
    callerWorkers(ctx.deps.db, ctx.deps.workers, ctx.caller.userId),
  ]);
  const answer: FleetView = { ...fleet, workers: mine.workers };
  sendJson(ctx.res, 200, answer);
}
