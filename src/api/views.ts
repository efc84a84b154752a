/**
 * The JSON shapes of rows on the API. Only what a caller may see: no object keys,
 * no command requests, no lease bookkeeping.
 *
 * @module
 */

import type { Artifact, Command, Run, Workspace } from '../store/index.js';
import { commandOutcome } from '../workbench/exec-action.js';
import { describeReleaseReason } from './release-reasons.js';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** A run. */
export function runView(run: Run) {
  return {
    id: run.id,
    status: run.status,
    ownerUserId: run.ownerUserId,
    conversationId: run.conversationId,
    createdAt: iso(run.createdAt),
    endedAt: iso(run.endedAt),
    retentionExpiresAt: iso(run.retentionExpiresAt),
  };
}

/** A command, its output as UTF-8 text. */
export function commandView(c: Command) {
  return {
    id: c.id,
    runId: c.runId,
    ...commandOutcome(c),
    errorCode: c.errorCode,
    errorCategory: c.errorCategory,
    queuedAt: iso(c.queuedAt),
    startedAt: iso(c.startedAt),
    finishedAt: iso(c.finishedAt),
  };
}

/** A workspace, its release reason also in words. */
export function workspaceView(w: Workspace) {
  return {
    id: w.id,
    runId: w.runId,
    nodeId: w.nodeId,
    status: w.status,
    releasedReason: w.releasedReason,
    releasedReasonText: describeReleaseReason(w.releasedReason),
    createdAt: iso(w.createdAt),
    releasedAt: iso(w.releasedAt),
  };
}

/** A promoted artifact. */
export function artifactView(a: Artifact) {
  return {
    id: a.id,
    runId: a.runId,
    name: a.name,
    contentType: a.contentType,
    size: a.size,
    sha256: a.hash,
    createdAt: iso(a.createdAt),
  };
}
