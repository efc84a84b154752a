/**
 * Release reasons in words, for the console and the API's `releasedReasonText`. The
 * operator's answer to "where did my files go" is a released row; its reason has to
 * read as an explanation, not as a code.
 *
 * @module
 */

import type { ReleasedReason } from '../store/index.js';

/** Every release reason, spelled out. */
export const RELEASE_REASON_TEXT: Readonly<Record<ReleasedReason, string>> = {
  node_lost: 'replica lost; another replica took over',
  handed_off: 'replica drained; it handed the workspace to another replica with every file',
  run_succeeded: 'run ended: succeeded',
  run_failed: 'run ended: failed',
  run_cancelled: 'run ended: cancelled',
  run_abandoned: 'run ended: abandoned (its driver stopped answering)',
  run_deleted: 'run deleted; its files were removed',
  orphaned: 'orphaned: cleanup found no live run for it',
};

/** The words for a reason; an unknown reason is shown as it is; none is null. */
export function describeReleaseReason(reason: string | null): string | null {
  if (reason === null) return null;
  return Object.hasOwn(RELEASE_REASON_TEXT, reason)
    ? RELEASE_REASON_TEXT[reason as ReleasedReason]
    : reason;
}
