import type { Queryable } from './db.js';
import { date, textOrNull } from './rows.js';

/**
 * Metadata an audit event may carry: ids, counts, codes and durations. Values are
 * scalars only, so command text, output and file contents have nowhere to hide.
 */
export type AuditMetadata = Record<string, string | number | boolean | null>;

/** An audit event as written. */
export interface NewAuditEvent {
  eventType: string;
  runId?: string | null;
  workspaceId?: string | null;
  commandId?: string | null;
  ownerUserId?: string | null;
  metadata?: AuditMetadata;
}

/** An audit event as stored. */
export interface AuditEvent extends Required<Omit<NewAuditEvent, 'metadata'>> {
  id: number;
  metadata: AuditMetadata;
  createdAt: Date;
}

function toEvent(r: Record<string, unknown>): AuditEvent {
  return {
    id: Number(r.id),
    eventType: String(r.event_type),
    runId: textOrNull(r.run_id),
    workspaceId: textOrNull(r.workspace_id),
    commandId: textOrNull(r.command_id),
    ownerUserId: textOrNull(r.owner_user_id),
    metadata: (r.metadata ?? {}) as AuditMetadata,
    createdAt: date(r.created_at),
  };
}

/** Appends one audit event. */
export async function insertAuditEvent(q: Queryable, event: NewAuditEvent): Promise<number> {
  const rows = await q.query(
    `insert into audit_event (event_type, run_id, workspace_id, command_id, owner_user_id,
       metadata)
     values ($1, $2, $3, $4, $5, $6::text::jsonb) returning id`,
    [
      event.eventType,
      event.runId ?? null,
      event.workspaceId ?? null,
      event.commandId ?? null,
      event.ownerUserId ?? null,
      JSON.stringify(event.metadata ?? {}),
    ],
  );
  return Number(rows[0]!.id);
}

/** The columns {@link toEvent} reads. */
const AUDIT_COLUMNS =
  'id, event_type, run_id, workspace_id, command_id, owner_user_id, metadata, created_at';

/** Audit events in the order written, filtered by run and/or command. */
export async function listAuditEvents(
  q: Queryable,
  filter: { runId?: string; commandId?: string; afterId?: number; limit?: number },
): Promise<AuditEvent[]> {
  const rows = await q.query(
    `select ${AUDIT_COLUMNS} from audit_event
     where ($1::text is null or run_id = $1) and ($2::text is null or command_id = $2)
       and id > $3
     order by id limit $4`,
    [filter.runId ?? null, filter.commandId ?? null, filter.afterId ?? 0, filter.limit ?? 1000],
  );
  return rows.map(toEvent);
}

/** What {@link pageAuditEvents} filters by; every field narrows. */
export interface AuditPageFilter {
  /** Only this user's events (an owner-scoped view); absent, everyone's (the operator's). */
  ownerUserId?: string;
  runId?: string;
  /** Only event types that start with this (`workspace_command.`, `artifact.promoted`). */
  eventTypePrefix?: string;
  /** Only events older than this id (the previous page's last). */
  beforeId?: number;
  limit: number;
}

/** Audit events newest first, a page at a time. */
export async function pageAuditEvents(
  q: Queryable,
  filter: AuditPageFilter,
): Promise<AuditEvent[]> {
  const rows = await q.query(
    `select ${AUDIT_COLUMNS} from audit_event
     where ($1::text is null or owner_user_id = $1) and ($2::text is null or run_id = $2)
       and ($3::text is null or starts_with(event_type, $3))
       and ($4::bigint is null or id < $4)
     order by id desc limit $5`,
    [
      filter.ownerUserId ?? null,
      filter.runId ?? null,
      filter.eventTypePrefix ?? null,
      filter.beforeId ?? null,
      filter.limit,
    ],
  );
  return rows.map(toEvent);
}

/** Removes a run's audit events (run deletion: they go with the run); returns how many. */
export async function deleteRunAuditEvents(q: Queryable, runId: string): Promise<number> {
  return q.execute('delete from audit_event where run_id = $1', [runId]);
}
