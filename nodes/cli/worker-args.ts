/**
 * The `memql workers` and `memql consent` command lines: the user's controls over
 * their worker hosts. Pure, like the rest of the parser.
 */
import { type ConsentStatus, isScope, type Scope } from '../../src/client/index.js';
import { take, UsageError } from './cli-usage.js';

/** A parsed `workers` or `consent` subcommand. */
export type WorkerCliCommand =
  | { kind: 'workers-list' }
  | { kind: 'workers-scope'; workerId: string; scope: Scope }
  | { kind: 'workers-kill-switch'; engaged: boolean; workerId?: string }
  | { kind: 'workers-invocations'; runId?: string; workerId?: string }
  | { kind: 'consent-list'; status?: ConsentStatus }
  | { kind: 'consent-approve'; requestId: string; scope?: 'observe' | 'full' }
  | { kind: 'consent-deny'; requestId: string };

/** The options these subcommands read. */
export interface WorkerOptionValues {
  readonly worker?: string;
  readonly run?: string;
  readonly status?: string;
  readonly scope?: string;
}

const CONSENT_STATUSES: readonly ConsentStatus[] = ['pending', 'approved', 'denied'];

/** `memql workers ls | scope | kill-switch | invocations`. */
export function parseWorkers(
  sub: string | undefined,
  rest: readonly string[],
  v: WorkerOptionValues,
): WorkerCliCommand {
  if (sub === 'ls' || sub === 'list') {
    take(rest, [], `workers ${sub}`);
    return { kind: 'workers-list' };
  }
  if (sub === 'scope') {
    const [workerId, scope] = take(rest, ['<workerId>', '<none|observe|full>'], 'workers scope');
    if (!isScope(scope)) {
      throw new UsageError(
        `workers scope: the scope must be none, observe or full, not "${scope}"`,
      );
    }
    return { kind: 'workers-scope', workerId: workerId!, scope };
  }
  if (sub === 'kill-switch') {
    const [state] = take(rest, ['<on|off>'], 'workers kill-switch');
    if (state !== 'on' && state !== 'off') {
      throw new UsageError(
        `workers kill-switch: expected on (computer use off) or off, not "${state}"`,
      );
    }
    return {
      kind: 'workers-kill-switch',
      engaged: state === 'on',
      ...(v.worker === undefined ? {} : { workerId: v.worker }),
    };
  }
  if (sub === 'invocations') {
    take(rest, [], 'workers invocations');
    return {
      kind: 'workers-invocations',
      ...(v.run === undefined ? {} : { runId: v.run }),
      ...(v.worker === undefined ? {} : { workerId: v.worker }),
    };
  }
  throw new UsageError(
    `workers: expected ls, scope, kill-switch or invocations, not "${sub ?? ''}"`,
  );
}

/** `memql consent ls | approve | deny`. */
export function parseConsent(
  sub: string | undefined,
  rest: readonly string[],
  v: WorkerOptionValues,
): WorkerCliCommand {
  if (sub === 'ls' || sub === 'list') {
    take(rest, [], `consent ${sub}`);
    const status = v.status;
    if (status !== undefined && !(CONSENT_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(
        `consent ${sub}: --status must be pending, approved or denied, not "${status}"`,
      );
    }
    return {
      kind: 'consent-list',
      ...(status === undefined ? {} : { status: status as ConsentStatus }),
    };
  }
  if (sub === 'approve') {
    const [requestId] = take(rest, ['<requestId>'], 'consent approve');
    const scope = v.scope;
    if (scope !== undefined && scope !== 'observe' && scope !== 'full') {
      throw new UsageError(
        `consent approve: --scope must be observe or full, not "${scope}" (to refuse, use "memql consent deny")`,
      );
    }
    return {
      kind: 'consent-approve',
      requestId: requestId!,
      ...(scope === undefined ? {} : { scope }),
    };
  }
  if (sub === 'deny') {
    return { kind: 'consent-deny', requestId: take(rest, ['<requestId>'], 'consent deny')[0]! };
  }
  throw new UsageError(`consent: expected ls, approve or deny, not "${sub ?? ''}"`);
}
