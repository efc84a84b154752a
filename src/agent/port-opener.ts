/**
 * Opening a connection to a port in a run's sandbox, for the port route
 * (`/v1/runs/:runId/ports/:port/...`), wherever the run's processes are: on the
 * in-process workbench (the local node), or on the replica that holds the run's
 * workspace, over a `workbench.port` tunnel of its `NodeService.Stream`. Processes are
 * not migrated, so only the holder can have one listening: a run no replica holds has
 * nothing listening, and a holder this node is not connected to is `unavailable`
 * (retry), never another replica.
 *
 * The opener is where the run's owner is checked (the route relies on it): a run that
 * is not the caller's is `not_found` before any connection is made. The in-process
 * workbench checks it against the owner of the processes it runs, without a read; a
 * remote agent reads the run, and the holder checks again.
 *
 * @module
 */

import type { Duplex } from 'node:stream';
import { type Authority, USER_SUBJECT_PREFIX, WorkbenchError } from '../contract/index.js';
import {
  authorityToWire,
  errorFromResponse,
  type PeerRegistry,
  PeerUnavailableError,
  type PortTarget,
  WORKBENCH_PORT_METHOD,
} from '../mesh/index.js';

/** Opens a connection to `port` in run `runId`'s sandbox, as `authority` (the run's owner). */
export type PortOpener = (runId: string, port: number, authority: Authority) => Promise<Duplex>;

/** What {@link portOpener} routes over. */
export interface PortOpenerOptions {
  /** Calls go to replicas (`MEMQL_WORKBENCH_REMOTE`). */
  readonly remote: boolean;
  /** The in-process workbench, when not remote. */
  readonly local: Partial<PortTarget> | null;
  /** The replicas, when remote. */
  readonly registry: Pick<PeerRegistry, 'views' | 'connection'> | null;
  /** The node of the run's live workspace, `null` when there is none. */
  readonly readAffinity: (runId: string) => Promise<string | null>;
  /** Whether `userId` owns run `runId` (and it is not deleted); needed when remote. */
  readonly ownsRun?: (runId: string, userId: string) => Promise<boolean>;
}

/** The owner's user id of a user authority (the run's owner, checked again where it runs). */
function ownerOf(authority: Authority): string {
  if (authority.class !== 'user') {
    throw new WorkbenchError('forbidden', 'forbidden: a port is opened for the run’s owner only');
  }
  return authority.subject.slice(USER_SUBJECT_PREFIX.length);
}

/**
 * The port route's opener over this node's workbenches; `null` when there is none to
 * open through (remote, but no router was wired).
 */
export function portOpener(options: PortOpenerOptions): PortOpener | null {
  if (!options.remote) {
    const openPort = options.local?.openPort?.bind(options.local);
    if (!openPort) return null;
    return (runId, port, authority) => openPort(runId, port, ownerOf(authority));
  }
  const { registry, ownsRun } = options;
  if (registry === null || ownsRun === undefined) return null;
  return async (runId, port, authority) => {
    const wire = authorityToWire(authority);
    if (wire === null) throw new WorkbenchError('forbidden', 'forbidden: not a minted authority');
    if (!(await ownsRun(runId, ownerOf(authority)))) {
      throw new WorkbenchError('not_found', `not_found: run "${runId}" does not exist`);
    }
    const nodeId = await options.readAffinity(runId);
    if (nodeId === null) {
      throw new WorkbenchError(
        'port_not_listening',
        `port_not_listening: no workbench holds run ${runId}'s workspace, so none of its background processes runs; start one with process_start, then retry`,
      );
    }
    const view = registry.views().find((v) => v.nodeId === nodeId && v.connected);
    const connection = view ? registry.connection(view.key) : undefined;
    if (!connection) {
      throw new WorkbenchError(
        'unavailable',
        `unavailable: workbench replica ${nodeId}, which holds run ${runId}'s workspace and its processes, is not connected to this agent node; retry shortly (if the replica is gone, its processes ended process_lost: see process_list)`,
      );
    }
    const payload = Buffer.from(JSON.stringify({ runId, port }), 'utf8');
    let opening: Awaited<ReturnType<typeof connection.tunnel>>;
    try {
      opening = await connection.tunnel(WORKBENCH_PORT_METHOD, wire, payload);
    } catch (err) {
      if (!(err instanceof PeerUnavailableError)) throw err;
      throw new WorkbenchError(
        'unavailable',
        `unavailable: workbench replica ${nodeId} went away while opening port ${port}; retry shortly`,
      );
    }
    if (opening.open) return opening.end;
    throw errorFromResponse(opening.response);
  };
}
