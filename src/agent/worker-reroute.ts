/**
 * The reroute: a call the workbench answered `environment_mismatch` goes, with the
 * same action and arguments, to a worker host of the caller's, when the consent gate
 * (`consent-gate.ts`) lets it. Everything the gate reads is read first (the user's
 * consent rows, their workers), and the decision is made before any frame goes to a
 * worker, so a refused call touches nothing. The outcomes:
 *
 * - runs on the worker: a routing record (`worker_invocation`, `reroutedFrom:
 *   "workbench"`) is written before the call is sent and closed with its outcome, and
 *   the answer carries `routing`;
 * - `consent_required`: a consent request is raised (or the pending one that asks the
 *   same is returned), and the answer carries its card;
 * - `kill_switch_engaged`: surfaced as it is, no card; also the answer of a call that
 *   was running when its user turned the kill switch on, which is stopped (see
 *   `worker-calls.ts`: the worker kills the command's process group);
 * - `worker_unavailable`: names what each of the caller's workers lacks.
 *
 * No answer tells the model how to approve anything: consent is the user's act, in
 * the console, and the model's token cannot do it (`person_required`).
 *
 * The dispatcher calls it for both API transports (plain and streaming), so they
 * cannot differ.
 *
 * @module
 */

import {
  type Authority,
  type DispatchFailure,
  type DispatchResult,
  type Envelope,
  envelopeToWire,
  environmentMismatchFromPayload,
  errorResult,
  isUserSubject,
  REROUTED_FROM,
  type UnmetNeed,
  USER_SUBJECT_PREFIX,
  type WorkerRouting,
} from '../contract/index.js';
import {
  authorityToWire,
  type DispatchCallOptions,
  type LiveWorker,
  type PeerRequestOptions,
  PeerUnavailableError,
  type ResponseFrame,
  resultFromResponse,
  type WireAuthority,
  WORKER_DISPATCH_METHOD,
} from '../mesh/index.js';
import {
  consentCard,
  type Db,
  finishWorkerInvocation,
  insertWorkerInvocation,
  listWorkerHosts,
  raiseConsentRequest,
  readConsentState,
  type WorkerHostRecord,
} from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { decideReroute, type GateDecision, type GateWorker } from './consent-gate.js';
import {
  cutShort,
  eitherSignal,
  killSwitchResult,
  WorkerCalls,
  type WorkerCallTicket,
} from './worker-calls.js';

/**
 * What the reroute needs from the node's worker hub, or from the links across agent
 * replicas (`worker-forward.ts`).
 */
export interface WorkerLinks {
  connected(userId: string): LiveWorker[];
  /**
   * Whether a stored worker that is not connected here serves calls from here all the
   * same (another agent replica holds its stream). Absent: none does.
   */
  reachable?(host: WorkerHostRecord): boolean;
  send(
    userId: string,
    workerId: string,
    method: string,
    authority: WireAuthority,
    payload: Buffer,
    options?: PeerRequestOptions,
  ): Promise<ResponseFrame>;
}

/** A rerouted call's answer and where it went. */
export interface RerouteOutcome {
  readonly result: DispatchResult;
  /** The worker it was sent to; null when it was not sent. */
  readonly workerId: string | null;
}

/** What {@link WorkerReroute} is built from. */
export interface WorkerRerouteDeps {
  readonly db: Db;
  readonly links: WorkerLinks;
  readonly log: Logger;
  /** This agent node's id, recorded as where the gate decided. */
  readonly nodeId?: string;
  /** The node's calls to worker hosts, which kill switches stop. Default: its own. */
  readonly calls?: WorkerCalls;
}

/** Sends mismatched calls to worker hosts, through the consent gate. */
export class WorkerReroute {
  /** The calls in flight, for the kill switch to stop. */
  readonly calls: WorkerCalls;

  constructor(private readonly deps: WorkerRerouteDeps) {
    this.calls = deps.calls ?? new WorkerCalls();
  }

  /**
   * Reroutes `envelope`, which the workbench refused with `mismatch`. A call that is
   * not the user's own (a system authority), or whose mismatch payload cannot be read,
   * keeps the mismatch.
   */
  async reroute(
    envelope: Envelope,
    authority: Authority,
    mismatch: DispatchFailure,
    options: DispatchCallOptions,
  ): Promise<RerouteOutcome> {
    const unmet = environmentMismatchFromPayload(mismatch.payload);
    if (authority.class !== 'user' || !isUserSubject(authority.subject) || unmet === null) {
      return { result: mismatch, workerId: null };
    }
    const userId = authority.subject.slice(USER_SUBJECT_PREFIX.length);
    // Taken before consent is read, so a kill switch turned on after the read stops it.
    const ticket = this.calls.begin(userId);
    try {
      return await this.decideAndRun(envelope, authority, userId, mismatch, unmet.unmetNeeds, {
        options,
        ticket,
      });
    } finally {
      ticket.end();
    }
  }

  private async decideAndRun(
    envelope: Envelope,
    authority: Authority,
    userId: string,
    mismatch: DispatchFailure,
    needs: readonly UnmetNeed[],
    call: { readonly options: DispatchCallOptions; readonly ticket: WorkerCallTicket },
  ): Promise<RerouteOutcome> {
    const log = this.deps.log.child({ runId: envelope.runId, action: envelope.action, userId });
    let decision: GateDecision;
    let linkNodes: ReadonlyMap<string, string>;
    try {
      ({ decision, linkNodes } = await this.decide(envelope, userId, needs));
    } catch (err) {
      log.error({ err }, 'reroute: reading consent failed');
      return {
        result: errorResult(
          'unavailable',
          'unavailable: the agent could not read your worker consent; nothing ran. Retry the call.',
        ),
        workerId: null,
      };
    }
    const base = { reroutedFrom: REROUTED_FROM, unmetNeeds: needs };
    switch (decision.kind) {
      case 'not_reroutable':
        return {
          result: errorResult(
            'environment_mismatch',
            `${mismatch.message}; worker hosts serve only the file actions and exec, so "${envelope.action}" is not rerouted`,
            mismatch.payload,
          ),
          workerId: null,
        };
      case 'kill_switch':
        log.info({ workerIds: decision.workerIds }, 'reroute refused: kill switch engaged');
        return {
          result: errorResult(
            'kill_switch_engaged',
            decision.workerIds.length === 0
              ? `kill_switch_engaged: this call needs ${needs.join(', ')}, which only a worker host provides, and the user has turned computer use off for every worker; nothing ran. Only the user can turn it back on, in the console: tell them what the work needs rather than retrying.`
              : `kill_switch_engaged: this call needs ${needs.join(', ')}; the user has turned the kill switch on for the workers that provide it (${decision.workerIds.join(', ')}); nothing ran. Only the user can turn it back on, in the console: tell them what the work needs rather than retrying.`,
            { ...base, workerIds: decision.workerIds },
          ),
          workerId: null,
        };
      case 'no_worker': {
        const lacking = decision.workers
          .map(
            (w) =>
              `${w.workerId} (${w.connected ? `lacks ${w.missing.join(', ')}` : 'not connected'})`,
          )
          .join('; ');
        return {
          result: errorResult(
            'worker_unavailable',
            `worker_unavailable: the workbench cannot provide ${needs.join(', ')}, and no connected worker host of yours provides ${decision.labels.join(', ')}${
              lacking ? ` (${lacking})` : ' (you have none)'
            }; nothing ran. Start \`memql worker\` on a machine that has it to run this call there.`,
            {
              ...base,
              requiredLabels: decision.labels,
              requiredScope: decision.requiredScope,
              workers: decision.workers,
            },
          ),
          workerId: null,
        };
      }
      case 'consent_required': {
        const request = await raiseConsentRequest(this.deps.db, {
          ownerUserId: userId,
          workerId: decision.workerId,
          runId: envelope.runId,
          action: envelope.action,
          needs: [...needs],
          requiredScope: decision.requiredScope,
          heldScope: decision.heldScope,
          summary: `${envelope.action} on worker "${decision.workerId}" needs ${needs.join(', ')}: scope ${decision.requiredScope} (held: ${decision.heldScope})`,
        });
        log.info(
          {
            consentRequestId: request.id,
            workerId: decision.workerId,
            scope: decision.requiredScope,
          },
          'reroute: consent required',
        );
        return {
          result: errorResult(
            'consent_required',
            `consent_required: this call needs ${needs.join(', ')}, which the user's worker "${decision.workerId}" provides, and runs there only with scope ${decision.requiredScope} (it holds ${decision.heldScope}); nothing ran. Consent request ${request.id} is waiting for the user: ask them to review it in the console, and repeat the call once they have approved it. Only the user can approve it; your token cannot.`,
            { ...base, consentRequest: consentCard(request) },
          ),
          workerId: null,
        };
      }
      case 'run':
        return this.run(
          envelope,
          authority,
          userId,
          needs,
          { ...decision, linkNodeId: linkNodes.get(decision.workerId) ?? null },
          call,
          log,
        );
    }
  }

  private async decide(envelope: Envelope, userId: string, needs: readonly UnmetNeed[]) {
    const [consent, known] = await Promise.all([
      readConsentState(this.deps.db, userId),
      listWorkerHosts(this.deps.db, userId),
    ]);
    const live = this.deps.links.connected(userId);
    const workers: GateWorker[] = live.map((w) => ({
      workerId: w.workerId,
      os: w.os,
      provides: w.provides,
      connected: true,
      inFlight: w.inFlight,
    }));
    const liveIds = new Set(live.map((w) => w.workerId));
    // Where each worker's stream is held: here, or on the peer replica its row names.
    const linkNodes = new Map<string, string>();
    for (const id of liveIds) if (this.deps.nodeId) linkNodes.set(id, this.deps.nodeId);
    for (const w of known) {
      if (!liveIds.has(w.workerId)) {
        const elsewhere = this.deps.links.reachable?.(w) ?? false;
        if (elsewhere) linkNodes.set(w.workerId, w.agentNodeId);
        workers.push({
          workerId: w.workerId,
          os: w.os,
          provides: w.provides,
          connected: elsewhere,
          inFlight: 0,
        });
      }
    }
    const hintOs = envelope.environment?.os;
    const decision = decideReroute(
      { action: envelope.action, unmetNeeds: needs, ...(hintOs ? { hintOs } : {}) },
      consent,
      workers,
    );
    return { decision, linkNodes };
  }

  private async run(
    envelope: Envelope,
    authority: Authority,
    userId: string,
    needs: readonly UnmetNeed[],
    decision: Extract<GateDecision, { kind: 'run' }> & { readonly linkNodeId: string | null },
    call: { readonly options: DispatchCallOptions; readonly ticket: WorkerCallTicket },
    log: Logger,
  ): Promise<RerouteOutcome> {
    const { options, ticket } = call;
    const wire = authorityToWire(authority);
    if (wire === null)
      return {
        result: errorResult('forbidden', 'forbidden: not a user authority'),
        workerId: null,
      };
    ticket.assign(decision.workerId);
    if (ticket.stopped) {
      // The switch went on while the gate read consent: nothing was sent.
      log.info({ workerId: decision.workerId }, 'reroute refused: kill switch engaged meanwhile');
      return {
        result: killSwitchResult([decision.workerId], needs, null),
        workerId: null,
      };
    }
    const invocation = await insertWorkerInvocation(this.deps.db, {
      ownerUserId: userId,
      workerId: decision.workerId,
      runId: envelope.runId,
      action: envelope.action,
      callId: envelope.callId ?? null,
      reroutedFrom: REROUTED_FROM,
      needs: [...needs],
      scope: decision.scope,
      decidedBy: this.deps.nodeId ?? null,
      linkNodeId: decision.linkNodeId,
    });
    const routing: WorkerRouting = {
      target: 'worker',
      reroutedFrom: REROUTED_FROM,
      workerId: decision.workerId,
      needs,
      scope: invocation.scope,
      invocationId: invocation.id,
    };
    log.info(
      {
        workerId: decision.workerId,
        invocationId: invocation.id,
        scope: routing.scope,
        linkNodeId: decision.linkNodeId,
      },
      'rerouted to a worker host',
    );
    const payload = Buffer.from(JSON.stringify(envelopeToWire(envelope)), 'utf8');
    let result: DispatchResult;
    let status: 'succeeded' | 'failed' | 'lost';
    try {
      const response = await this.deps.links.send(
        userId,
        decision.workerId,
        WORKER_DISPATCH_METHOD,
        wire,
        payload,
        {
          signal: eitherSignal(options.signal, ticket.signal),
          ...(options.onOutput ? { onOutput: options.onOutput } : {}),
        },
      );
      result = resultFromResponse(response);
      if (ticket.stopped && cutShort(envelope.action, result)) {
        log.info(
          { workerId: decision.workerId, invocationId: invocation.id },
          'worker call stopped by the kill switch',
        );
        result = killSwitchResult([decision.workerId], needs, result);
      }
      status = result.ok ? 'succeeded' : 'failed';
    } catch (err) {
      if (!(err instanceof PeerUnavailableError)) throw err;
      status = 'lost';
      result = err.sent
        ? errorResult(
            'unavailable',
            `unavailable: worker "${decision.workerId}" went away while running the call; whether it took effect is unknown (routing record ${invocation.id})`,
          )
        : errorResult(
            'worker_unavailable',
            `worker_unavailable: worker "${decision.workerId}" went away before the call was sent; nothing ran. Reconnect it, or start \`memql worker\` on another machine that provides ${needs.join(', ')}.`,
            {
              reroutedFrom: REROUTED_FROM,
              unmetNeeds: needs,
              workers: [{ workerId: decision.workerId, connected: false, missing: [] }],
            },
          );
    }
    try {
      await finishWorkerInvocation(
        this.deps.db,
        invocation.id,
        status,
        result.ok ? null : result.errorCode,
      );
    } catch (err) {
      log.error(
        { err, invocationId: invocation.id },
        'recording the outcome of a worker call failed',
      );
    }
    return { result: { ...result, routing }, workerId: decision.workerId };
  }
}
