/**
 * What a call on a run reads before anything else, in one round trip: the run, its
 * live workspace row and its manifest head. A node that already holds the workspace
 * and whose copy is current learns all it needs from this one statement.
 *
 * @module
 */

import type { Queryable } from './db.js';
import { textOrNull } from './rows.js';
import { RUN_COLUMNS, type Run, toRun } from './runs.js';
import { toWorkspace, WORKSPACE_COLUMNS, type Workspace } from './workspaces.js';

/** A run with its live workspace row and manifest head, read in one snapshot. */
export interface RunWorkspace {
  /** The run; null when it does not exist or was deleted (then nothing else is read). */
  run: Run | null;
  /** The run's live (provisioned) workspace row, if any. */
  live: Workspace | null;
  /** The manifest version and its committer; version 0 before the first commit. */
  head: { version: number; updatedByNode: string | null };
}

/** Prefix of the workspace row's columns in the joined row. */
const WS = 'ws_';

const SELECT = `select ${RUN_COLUMNS.replace(/(\w+)/g, 'r.$1')},
  ${WORKSPACE_COLUMNS.replace(/(\w+)/g, `w.$1 as ${WS}$1`)},
  m.version as manifest_version, m.updated_by_node as manifest_updated_by_node
  from run r
  left join workbench_workspace w on w.run_id = r.id and w.status = 'provisioned'
  left join workspace_manifest m on m.run_id = r.id
  where r.id = $1 and r.deleted_at is null`;

/** The workspace columns of a joined row, unprefixed; null when the join found none. */
function workspaceOf(row: Record<string, unknown>): Workspace | null {
  if (row[`${WS}id`] === null || row[`${WS}id`] === undefined) return null;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith(WS)) fields[key.slice(WS.length)] = value;
  }
  return toWorkspace(fields);
}

/** Reads the run, its live workspace and its manifest head in one statement. */
export async function getRunWorkspace(q: Queryable, runId: string): Promise<RunWorkspace> {
  const rows = await q.query(SELECT, [runId]);
  const row = rows[0];
  if (row === undefined) {
    return { run: null, live: null, head: { version: 0, updatedByNode: null } };
  }
  const version = row.manifest_version;
  return {
    run: toRun(row),
    live: workspaceOf(row),
    head: {
      version: version === null || version === undefined ? 0 : Number(version),
      updatedByNode: textOrNull(row.manifest_updated_by_node),
    },
  };
}
