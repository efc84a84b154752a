/**
 * Telling workbench replicas that a run ended or was deleted, so that each lets go of
 * what it keeps of it (its warm sandbox, copy and upload stages) before the end or
 * delete call answers. Every connected replica is asked, not only the run's holder:
 * a replica that held the run before a takeover may still have a warm copy of it.
 * A replica that is not reached, or does not answer within the wait, lets go in its
 * own cleanup sweep.
 *
 * @module
 */

import {
  type PeerRegistry,
  resultFromResponse,
  settleWithin,
  WORKBENCH_RELEASE_RUN_METHOD,
} from '../mesh/index.js';
import type { Logger } from '../telemetry/index.js';

/** Default of the `waitMs` of {@link releaseRunOnReplicas}, ms. */
export const RELEASE_WAIT_MS = 10_000;

/**
 * Asks every connected replica to let go of `runId`, and waits for their answers for
 * at most `waitMs`. Never throws: a replica that fails is logged and left to its sweep.
 */
export async function releaseRunOnReplicas(
  registry: Pick<PeerRegistry, 'views' | 'connection'>,
  runId: string,
  options: { log: Logger; waitMs?: number },
): Promise<void> {
  const payload = Buffer.from(JSON.stringify({ runId }), 'utf8');
  const asks = registry
    .views()
    .filter((view) => view.connected)
    .map(async (view) => {
      try {
        const connection = registry.connection(view.key);
        if (!connection) return;
        const answer = resultFromResponse(
          await connection.request(WORKBENCH_RELEASE_RUN_METHOD, null, payload),
        );
        if (!answer.ok) {
          options.log.warn(
            { runId, peer: view.key, errorCode: answer.errorCode },
            'a replica did not let go of an ended run; its sweep will',
          );
        }
      } catch (err) {
        options.log.warn(
          { err, runId, peer: view.key },
          'a replica could not be told a run ended; its sweep lets go of it',
        );
      }
    });
  await settleWithin(asks, options.waitMs ?? RELEASE_WAIT_MS);
}
