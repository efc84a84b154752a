/**
 * The JSON shapes of rows on the API. Only what a caller may see: no object keys,
 * no command requests, no lease bookkeeping. Each builder returns its contract shape,
 * the type the client reads, so a field that drifts is a compile error here.
 *
 * @module
 */

import type {
  ArtifactRecord,
  CommandRecord,
  CommandSummaryRecord,
  ConsentRequestView,
  RunView,
  WorkerConsentView,
  WorkerInvocationView,
  WorkspaceRecord,
} from '../contract/index.js';
import { commandAnswer } from '../queue/index.js';
import {
  type Artifact,
  type Command,
  type ConsentRequestRecord,
  consentCard,
  type Run,
  type WorkerConsent,
  type WorkerInvocation,
  type Workspace,
} from '../store/index.js';
import { describeReleaseReason } from './release-reasons.js';

function iso(d: Date): string;
function iso(d: Date | null): string | null;
function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}

/** A run, with its network policy (host rules as written, secret names). */
export function runView(run: Run): RunView {
  return {
    id: run.id,
    status: run.status,
    ownerUserId: run.ownerUserId,
    conversationId: run.conversationId,
    createdAt: iso(run.createdAt),
    endedAt: iso(run.endedAt),
    retentionExpiresAt: iso(run.retentionExpiresAt),
    network: { allow: [...run.network.allow], secrets: [...run.network.secrets] },
  };
}

/** A command as a list reads it: everything but its output, request and expected outputs. */
export type CommandSummary = Omit<
  Command,
  'stdout' | 'stderr' | 'request' | 'execRequest' | 'outputs'
>;

/**
 * A command in a list (`GET /v1/runs/:runId/commands`): how it ended, without the
 * output bodies and expected outputs, which only {@link commandView} carries.
 */
export function commandSummaryView(c: CommandSummary): CommandSummaryRecord {
  const {
    stdout: _stdout,
    stderr: _stderr,
    stdoutEncoding: _stdoutEncoding,
    stderrEncoding: _stderrEncoding,
    ...outcome
  } = commandAnswer({
    ...c,
    stdout: null,
    stderr: null,
    request: {},
    execRequest: null,
    outputs: null,
  });
  return {
    id: c.id,
    runId: c.runId,
    callId: c.callId,
    ...outcome,
    errorCode: c.errorCode,
    errorCategory: c.errorCategory,
    timeoutMs: c.timeoutMs,
    attempts: c.attempts,
    queuedAt: iso(c.queuedAt),
    startedAt: iso(c.startedAt),
    finishedAt: iso(c.finishedAt),
  };
}

/**
 * A command: the list's fields plus `stdout` and `stderr` (UTF-8 text, or base64 with
 * `stdoutEncoding`/`stderrEncoding` when not text), and `outputs` when it named
 * expected outputs.
 */
export function commandView(c: Command): CommandRecord {
  return { ...commandSummaryView(c), ...commandAnswer(c) };
}

/** A workspace, its release reason also in words. */
export function workspaceView(w: Workspace): WorkspaceRecord {
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
export function artifactView(a: Artifact): ArtifactRecord {
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

/** A user's standing consent on one worker. */
export function workerConsentView(c: WorkerConsent): WorkerConsentView {
  return {
    workerId: c.workerId,
    scope: c.scope,
    killSwitch: c.killSwitch,
    updatedAt: iso(c.updatedAt),
  };
}

/** A consent request: the card the user decides on, and when and how it was decided. */
export function consentRequestView(r: ConsentRequestRecord): ConsentRequestView {
  return {
    ...consentCard(r),
    createdAt: r.createdAt.toISOString(),
    decidedAt: iso(r.decidedAt),
    decidedScope: r.decidedScope,
  };
}

/** The routing record of a call sent to a worker host. */
export function workerInvocationView(w: WorkerInvocation): WorkerInvocationView {
  return {
    id: w.id,
    workerId: w.workerId,
    runId: w.runId,
    action: w.action,
    callId: w.callId,
    reroutedFrom: w.reroutedFrom,
    needs: w.needs,
    scope: w.scope,
    status: w.status,
    errorCode: w.errorCode,
    startedAt: w.startedAt.toISOString(),
    finishedAt: iso(w.finishedAt),
  };
}
