/**
 * The caller's worker hosts through an agent node's HTTP API (`client.workers`): the
 * hosts and their standing scopes, the kill switch, consent requests (deciding one takes
 * a person token) and the routing records of calls sent to workers.
 *
 * @module
 */

import type {
  ApproveAnswer,
  ConsentRequestView,
  ConsentStatus,
  KillSwitchAnswer,
  Scope,
  SetScopeAnswer,
  WorkerInvocationView,
  WorkersAnswer,
} from '../contract/index.js';
import { type ClientTransport, enc, field, pageSearch } from './client-transport.js';
import { checkedId } from './id-checks.js';

/** The worker routes of {@link WorkbenchClient}, as `client.workers`. */
export class WorkerClient {
  constructor(private readonly http: ClientTransport) {}

  /**
   * The caller's worker hosts (every one they have connected; `connected` says which
   * are connected to this agent node now), each with its standing scope and kill
   * switch, and the user-wide kill switch.
   */
  async list(): Promise<WorkersAnswer> {
    return (await this.http.json('GET', '/v1/workers')) as WorkersAnswer;
  }

  /**
   * Sets a worker's standing scope to any rung with a person token; an agent token may
   * only keep or lower it (a raise throws `person_required`, 403).
   */
  async setScope(workerId: string, scope: Scope): Promise<SetScopeAnswer> {
    const path = `/v1/workers/${enc(workerId, 'workerId')}/scope`;
    return (await this.http.json('PUT', path, { body: { scope } })) as SetScopeAnswer;
  }

  /**
   * Engages (`true`: computer use off) or releases the kill switch: of every worker of
   * the caller's, those connected later too, or of `workerId` alone. Engaging stops the
   * calls running there; releasing needs a person token (`person_required`, 403).
   */
  async setKillSwitch(
    engaged: boolean,
    options: { readonly workerId?: string } = {},
  ): Promise<KillSwitchAnswer> {
    const body = await this.http.json('POST', '/v1/workers/kill-switch', {
      body: { engaged, ...options },
    });
    return body as KillSwitchAnswer;
  }

  /** The caller's consent requests, newest first; pending ones unless `status` says otherwise. */
  async listConsentRequests(
    options: { readonly status?: ConsentStatus; readonly limit?: number } = {},
  ): Promise<readonly ConsentRequestView[]> {
    const body = await this.http.json('GET', `/v1/consent-requests${pageSearch(options)}`);
    return field<ConsentRequestView[]>(body, 'requests');
  }

  /**
   * Approves a pending consent request at `scope` (the request's `requiredScope` when
   * omitted). `covers` is false when the worker's standing scope still does not cover
   * what the call needs. A request already decided throws `invalid_arguments` (409);
   * an agent token throws `person_required` (403): only a person decides.
   */
  async approveConsentRequest(
    requestId: string,
    options: { readonly scope?: Exclude<Scope, 'none'> } = {},
  ): Promise<ApproveAnswer> {
    const path = `/v1/consent-requests/${enc(requestId)}/approve`;
    return (await this.http.json('POST', path, { body: options })) as ApproveAnswer;
  }

  /** Denies a pending consent request (person token only); the standing scope stays as it was. */
  async denyConsentRequest(requestId: string): Promise<ConsentRequestView> {
    const path = `/v1/consent-requests/${enc(requestId)}/deny`;
    return field<ConsentRequestView>(await this.http.json('POST', path, { body: {} }), 'request');
  }

  /** Routing records of calls sent to the caller's workers, newest first: why a call ran there. */
  async listInvocations(
    options: { readonly runId?: string; readonly workerId?: string; readonly limit?: number } = {},
  ): Promise<readonly WorkerInvocationView[]> {
    const query = new URLSearchParams();
    if (options.runId !== undefined) query.set('runId', checkedId('runId', options.runId));
    if (options.workerId !== undefined) {
      query.set('workerId', checkedId('workerId', options.workerId));
    }
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const search = query.size > 0 ? `?${query}` : '';
    const body = await this.http.json('GET', `/v1/worker-invocations${search}`);
    return field<WorkerInvocationView[]>(body, 'invocations');
  }

  /** One routing record, by id. */
  async getInvocation(invocationId: string): Promise<WorkerInvocationView> {
    const body = await this.http.json(
      'GET',
      `/v1/worker-invocations/${enc(invocationId, 'invocationId')}`,
    );
    return field<WorkerInvocationView>(body, 'invocation');
  }
}
