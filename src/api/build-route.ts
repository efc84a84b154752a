/**
 * The build entry (runbook 3.1): `POST /v1/admin/runs/:runId/build` and its stream
 * form `.../build/stream`, `{ref?, script?, callId?}`. The only way to a package
 * build: the operator credential is checked by the admin routes, and the system
 * authority the build needs is minted here, in node code, never taken from the wire.
 * The call then goes through the same dispatcher as every tool call, so it is routed
 * to a replica that can build and answers a dispatch result (refusals included, as a
 * 200 carrying `{ok: false, errorCode}`), with the stream form's output lines first.
 *
 * The operator can build in any user's run; the credential opens no other action on
 * it. The audit log records who asked (`build.requested`: the credential's id, never
 * the ref's output); the command's own events follow as for any command.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DispatchResult,
  errorResult,
  parseEnvelope,
  resultFromError,
  systemAuthority,
} from '../contract/index.js';
import { getRun, insertAuditEvent } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import type { ApiDeps } from './api-deps.js';
import { abortOnDisconnect, cancelOnDisconnect, sendResultStream } from './dispatch-routes.js';
import { BODY_LIMIT_BYTES, readJsonObject, rejectUnknownFields, sendJson } from './http-io.js';

/** The subject builds run under: the deploy pipeline's. */
export const BUILD_SUBJECT = 'system:deploy';

/** The `agentId` recorded on an operator's build. */
export const BUILD_AGENT_ID = 'operator';

/** `/v1/admin/runs/:runId/build` and `/build/stream`: the run id and the form. */
export const BUILD_ROUTE = /^\/v1\/admin\/runs\/([^/]+)\/build(\/stream)?$/;

/** Serves one build request of operator `operatorId`. */
export async function serveBuild(
  deps: ApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  operatorId: string,
  match: { runId: string; stream: boolean },
  log: Logger,
): Promise<void> {
  const cancel = cancelOnDisconnect(new URL(req.url ?? '/', 'http://api').searchParams);
  const body = await readJsonObject(req, BODY_LIMIT_BYTES);
  rejectUnknownFields(body, ['ref', 'script', 'callId']);
  const { ref, script, callId } = body;
  const controller = abortOnDisconnect(res, cancel);
  const build = (options: Parameters<ApiDeps['dispatcher']['dispatch']>[2]) =>
    dispatchBuild(deps, { operatorId, runId: match.runId, ref, script, callId }, options, log);
  if (!match.stream) {
    const result = await build({ signal: controller.signal });
    if (!res.destroyed) sendJson(res, 200, result);
    return;
  }
  await sendResultStream(res, log, (onOutput) => build({ signal: controller.signal, onOutput }));
}

async function dispatchBuild(
  deps: ApiDeps,
  call: { operatorId: string; runId: string; ref: unknown; script: unknown; callId: unknown },
  options: Parameters<ApiDeps['dispatcher']['dispatch']>[2],
  log: Logger,
): Promise<DispatchResult> {
  const args = {
    ...(call.ref === undefined ? {} : { ref: call.ref }),
    ...(call.script === undefined ? {} : { script: call.script }),
  };
  const parsed = parseEnvelope({
    action: 'build',
    args,
    runId: call.runId,
    agentId: BUILD_AGENT_ID,
    taskId: `build:${call.operatorId}`,
    ...(call.callId === undefined ? {} : { callId: call.callId }),
  });
  if (!parsed.ok) return parsed;
  const run = await getRun(deps.db, call.runId);
  if (run === null) {
    return errorResult('not_found', `not_found: run "${call.runId}" does not exist`, {
      runId: call.runId,
    });
  }
  await insertAuditEvent(deps.db, {
    eventType: 'build.requested',
    runId: run.id,
    ownerUserId: run.ownerUserId,
    metadata: {
      operatorId: call.operatorId,
      ...(parsed.envelope.callId ? { callId: parsed.envelope.callId } : {}),
    },
  });
  const buildLog = log.child({ runId: run.id, operatorId: call.operatorId });
  buildLog.info('build requested');
  try {
    const { result } = await deps.dispatcher.dispatch(
      parsed.envelope,
      systemAuthority(BUILD_SUBJECT),
      options,
    );
    buildLog.info(
      { ok: result.ok, ...(result.ok ? {} : { errorCode: result.errorCode }) },
      'build answered',
    );
    return result;
  } catch (err) {
    buildLog.error({ err }, 'build dispatch threw');
    return resultFromError(err);
  }
}
