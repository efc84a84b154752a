/**
 * What `memql workers` and `memql consent` print: the caller's worker hosts, consent
 * requests and routing records as tables. Pure functions of data.
 */
import type {
  ApproveAnswer,
  ConsentRequestView,
  WorkerInvocationView,
  WorkersAnswer,
  WorkerView,
} from '../../src/client/index.js';
import { table } from './cli-table.js';

const list = (values: readonly string[]) => (values.length === 0 ? '-' : values.join(','));

/** Worker rows: id, whether connected here, OS, needs it provides, scope, kill switch. */
export function workerRows(workers: readonly WorkerView[]): string {
  return table(
    ['WORKER', 'CONNECTED', 'OS', 'PROVIDES', 'SCOPE', 'KILL SWITCH', 'LOAD', 'VERSION'],
    workers.map((w) => [
      w.workerId,
      w.connected ? 'yes' : w.disconnectedAt === null ? 'no' : `no (since ${w.disconnectedAt})`,
      w.os,
      list(w.provides),
      w.scope,
      w.killSwitch ? 'on' : 'off',
      w.capacity === null ? '-' : `${w.inFlight}/${w.capacity}`,
      w.version,
    ]),
  );
}

/** `memql workers ls`: the user-wide kill switch, then the workers. */
export function formatWorkers(answer: WorkersAnswer): string {
  const head = answer.killSwitch
    ? 'kill switch: ON for every worker (no call runs on any; only the user turns it off, in the console)\n'
    : 'kill switch: off\n';
  if (answer.workers.length === 0) {
    return `${head}no workers: start "memql worker" on a machine of yours to connect one\n`;
  }
  return head + workerRows(answer.workers);
}

/** Consent requests as a table, and how to answer them. */
export function formatConsentRequests(requests: readonly ConsentRequestView[]): string {
  if (requests.length === 0) return 'no consent requests\n';
  const rows = table(
    ['ID', 'WORKER', 'RUN', 'ACTION', 'NEEDS', 'REQUIRED', 'HELD', 'STATUS', 'CREATED'],
    requests.map((r) => [
      r.id,
      r.workerId,
      r.runId,
      r.action,
      list(r.needs),
      r.requiredScope,
      r.heldScope,
      r.status === 'approved' ? `approved (${r.decidedScope ?? '?'})` : r.status,
      r.createdAt,
    ]),
  );
  const pending = requests.some((r) => r.status === 'pending');
  return pending ? `${rows}(the user answers them, in the console)\n` : rows;
}

/** What approving did. */
export function formatApproval(answer: ApproveAnswer): string {
  return `${answer.covers ? '' : 'warning: '}${answer.message}\n`;
}

/** Routing records: why each call ran on a worker. */
export function formatInvocations(records: readonly WorkerInvocationView[]): string {
  if (records.length === 0) return 'no calls were sent to a worker\n';
  return table(
    ['ID', 'RUN', 'WORKER', 'ACTION', 'FROM', 'NEEDS', 'SCOPE', 'STATUS', 'STARTED'],
    records.map((r) => [
      r.id,
      r.runId,
      r.workerId,
      r.action,
      r.reroutedFrom,
      list(r.needs),
      r.scope,
      r.errorCode === null ? r.status : `${r.status} (${r.errorCode})`,
      r.startedAt,
    ]),
  );
}
