/**
 * What a workbench host is built from, and what one call to it may carry.
 *
 * @module
 */

import type { OutputSink } from '../contract/index.js';
import type { ObjectStore } from '../objects/index.js';
import type { Db, RowRetention, VersionRetention } from '../store/index.js';
import type { CommandMetrics, Logger } from '../telemetry/index.js';
import type { ExecDeps, FetchLimits } from './actions/index.js';
import type { WorkbenchEgress } from './egress/index.js';
import type { ProcessSettings } from './process-calls.js';
import type { WorkspaceQuota } from './sync/index.js';

/** Everything the workbench host is built from. */
export interface WorkbenchHostDeps {
  db: Db;
  /** Where workspace file bytes live (content-addressed, per run). */
  objects: ObjectStore;
  /** `MEMQL_NODE_ID`, stamped on the workspace rows this node holds. */
  nodeId: string;
  /** `MEMQL_WORKBENCH_ROOT`. */
  workbenchRoot: string;
  /** Owner of workspace directories and files the node writes: the sandbox uid, when root. */
  fileOwner?: { uid: number; gid: number };
  /** Read and write caps of the file actions, bytes. */
  files: { maxReadBytes: number; maxWriteBytes: number };
  exec: ExecDeps;
  /** The node's egress (`MEMQL_EGRESS_*`); absent: no command has network. */
  egress?: WorkbenchEgress;
  fetch: FetchLimits;
  /**
   * The durable command queue's settings (`MEMQL_COMMAND_CONCURRENCY`, lease, poll, and
   * `MEMQL_NODE_LIVENESS_MS`: how long a silent node still counts as holding its
   * workspaces).
   */
  queue: {
    concurrency: number;
    leaseMs: number;
    pollIntervalMs: number;
    livenessMs?: number;
    metrics?: CommandMetrics;
    /** `MEMQL_QUEUE_FOLLOW_UP_LEAD_MS`: a run's later command's lead in the queue. Default 30000. */
    followUpLeadMs?: number;
    /**
     * `MEMQL_COMMAND_KEEP_MS` and `MEMQL_AUDIT_KEEP_MS`: what the cleanup sweep deletes
     * of finished commands and audit events. Absent: both kept while their run is.
     */
    retention?: RowRetention;
  };
  /**
   * `MEMQL_HANDOFF_WAIT_MS`: how long a call waits for a draining node to hand the
   * run's workspace over before answering `unavailable`. Default 30000.
   */
  handoffWaitMs?: number;
  /**
   * `MEMQL_WORKSPACE_MAX_BYTES` and `MEMQL_WORKSPACE_MAX_FILES`: what one workspace
   * may hold. Omitted: no limit.
   */
  quota?: WorkspaceQuota;
  /** `MEMQL_HYDRATED_IDLE_TTL_MS`: how long a warm copy is kept after its last use; 0 disables reuse. */
  idleTtlMs: number;
  /**
   * `MEMQL_WARM_MANIFESTS_MAX`: most warm copies whose manifest snapshot is kept in
   * memory. Default `DEFAULT_WARM_MANIFESTS_MAX` (256).
   */
  warmManifestsMax?: number;
  /** `MEMQL_CLEANUP_INTERVAL_MS`: period of the cleanup sweep. */
  cleanupIntervalMs: number;
  /** `MEMQL_UPLOAD_IDLE_MS`: how long an upload's stage lives with no new part. Default one hour. */
  uploadIdleMs?: number;
  /** How long versions are kept (`MEMQL_VERSION_KEEP_*`); absent, as long as their run. */
  versionRetention?: VersionRetention;
  /**
   * Where the build toolchain probe makes its scratch directory (outside every
   * workspace). Default the OS temp dir.
   */
  probeDir?: string;
  /** Background processes (`MEMQL_PROCESS_*`). Default {@link DEFAULT_PROCESS_SETTINGS}. */
  processes?: ProcessSettings;
  log: Logger;
}

/** Per-call options of {@link WorkbenchHost.handleDispatch}. */
export interface DispatchOptions {
  /** Cancels a running `exec` (the sandbox is killed) or a `fetch`. */
  signal?: AbortSignal;
  /** Receives `exec` output as it arrives. */
  onOutput?: OutputSink;
}
