/**
 * The audit trail over HTTP: a user's own events (`GET /v1/audit`), and everyone's for
 * an operator (`GET /v1/admin/audit`, in `admin-routes.ts`), newest first, a page at a
 * time. Events carry ids, counts, codes and durations only: never command text, output,
 * file contents or credentials (what writes them sees to that).
 *
 * | query | what |
 * |---|---|
 * | `runId` | one run's events |
 * | `type` | event types that start with it: `workspace_command.`, `workspace_process.exited` |
 * | `before` | events older than this id: the previous page's `nextBefore` |
 * | `limit` | 1 to 500, default 50 |
 *
 * @module
 */

import { MAX_ID_CHARS } from '../contract/index.js';
import { type AuditEvent, type AuditPageFilter, type Db, pageAuditEvents } from '../store/index.js';
import type { RouteContext } from './api-deps.js';
import { invalidField } from './http-errors.js';
import { sendJson } from './http-io.js';
import { PAGE_DEFAULT, PAGE_MAX } from './page-query.js';

/** An audit event as the API answers it. */
export function auditEventView(event: AuditEvent) {
  return {
    id: event.id,
    eventType: event.eventType,
    runId: event.runId,
    workspaceId: event.workspaceId,
    commandId: event.commandId,
    ownerUserId: event.ownerUserId,
    metadata: event.metadata,
    createdAt: event.createdAt.toISOString(),
  };
}

/** The filter of an audit query (`?runId=&type=&before=&limit=`); a bad value names itself. */
export function auditQuery(query: URLSearchParams): Omit<AuditPageFilter, 'ownerUserId'> {
  const text = (name: string, max: number): string | undefined => {
    const value = query.get(name);
    if (value === null) return undefined;
    if (value.length === 0 || value.length > max) {
      throw invalidField(name, `expected 1 to ${max} characters`);
    }
    return value;
  };
  const number = (name: string, max: number): number | undefined => {
    const value = query.get(name);
    if (value === null) return undefined;
    if (!/^[1-9]\d{0,15}$/.test(value) || Number(value) > max) {
      throw invalidField(name, `expected a whole number from 1 to ${max}`);
    }
    return Number(value);
  };
  const runId = text('runId', MAX_ID_CHARS);
  const type = text('type', 100);
  const before = number('before', Number.MAX_SAFE_INTEGER);
  return {
    ...(runId === undefined ? {} : { runId }),
    ...(type === undefined ? {} : { eventTypePrefix: type }),
    ...(before === undefined ? {} : { beforeId: before }),
    limit: number('limit', PAGE_MAX) ?? PAGE_DEFAULT,
  };
}

/** One page of events and where the next starts. */
export async function auditPage(db: Db, filter: AuditPageFilter) {
  const rows = await pageAuditEvents(db, { ...filter, limit: filter.limit + 1 });
  const page = rows.slice(0, filter.limit);
  return {
    events: page.map(auditEventView),
    nextBefore: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/** `GET /v1/audit?runId=&type=&before=&limit=`: the caller's own events. */
export async function auditRoute(ctx: RouteContext): Promise<void> {
  const filter = { ...auditQuery(ctx.query), ownerUserId: ctx.caller.userId };
  sendJson(ctx.res, 200, await auditPage(ctx.deps.db, filter));
}
