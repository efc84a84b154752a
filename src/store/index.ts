/**
 * The store: the only place that writes SQL. One query family per file; every
 * function takes a {@link Queryable} (the database or an open transaction), so a
 * caller composes them into one transaction when it needs to.
 *
 * ```ts
 * const db = await openDb({ kind: 'postgres', url });
 * await migrate(db);
 * const run = await getRun(db, runId);
 * ```
 *
 * @packageDocumentation
 */
export {
  API_TOKEN_PREFIX,
  type ApiTokenOptions,
  type ApiTokenRecord,
  addApiToken,
  createApiToken,
  createOperatorCredential,
  getApiToken,
  hashApiToken,
  listApiTokens,
  type NewApiToken,
  type NewOperatorCredential,
  OPERATOR_TOKEN_PREFIX,
  PERSON_TOKEN_PREFIX,
  resolveApiToken,
  resolveOperatorCredential,
  resolveTokenIdentity,
  revokeApiToken,
  revokeApiTokenById,
  type TokenIdentity,
  tokenPrefix,
} from './api-tokens.js';
export {
  type Artifact,
  artifactsInsert,
  artifactsParam,
  getArtifactForOwner,
  insertArtifact,
  listArtifactsForOwner,
  markRunArtifactsDeleted,
  type NewArtifact,
  recordArtifacts,
} from './artifacts.js';
export {
  type AuditEvent,
  type AuditMetadata,
  type AuditPageFilter,
  deleteRunAuditEvents,
  insertAuditEvent,
  listAuditEvents,
  type NewAuditEvent,
  pageAuditEvents,
} from './audit-events.js';
export {
  BLOB_UPLOAD_TTL_MS,
  type BlobRef,
  blobsNamedElsewhere,
  clearBlobUploads,
  expireBlobUploads,
  foreignBlobsOf,
  recordBlobUploads,
  unneededBlobs,
} from './blob-refs.js';
export {
  CallIdConflict,
  type CallKey,
  type CallRecord,
  claimCallKey,
  getCallRecord,
  recordCallOutcome,
  sameCall,
} from './call-keys.js';
export { commandDurationMs, commandEventMetadata, queueWaitMs } from './command-events.js';
export {
  type CancelEffect,
  type ClaimAffinity,
  type ClaimWithFinish,
  type CommandOutcome,
  cancelCommand,
  claimCommands,
  claimNextCommand,
  expireCommandLease,
  finishAndClaim,
  finishCommand,
  heartbeatCommand,
  heartbeatCommandLease,
  type LeaseHeartbeat,
  requestCommandCancel,
} from './command-lease.js';
export { DEFAULT_FOLLOW_UP_LEAD_MS } from './command-place.js';
export {
  endLostCommands,
  type HeldCommand,
  markCommandBegan,
  readStaleCandidates,
  requeueCommands,
  type StaleCandidate,
} from './command-recovery.js';
export {
  COMMAND_QUEUED_CHANNEL,
  type Command,
  type CommandStatus,
  countLiveCommands,
  deleteRunCommands,
  type EnqueueOptions,
  enqueueCommand,
  type FilesRefused,
  getCommand,
  getCommandByCallId,
  getCommands,
  listenForQueuedCommands,
  listRunCommands,
  type NewCommand,
  type QueuedNotice,
  TERMINAL_COMMAND_STATUSES,
  type TerminalCommandStatus,
} from './commands.js';
export { DataDirLockedError, LOCK_FILE } from './data-dir-lock.js';
export type { Db, DbKind, Queryable, Row, Subscription } from './db.js';
export {
  ageMsSql,
  type Continuity,
  continuityBeatSql,
  type GoneEvidence,
  readContinuity,
  steadyDatabaseSql,
} from './db-continuity.js';
export { rethrowing, StoreError, type StoreErrorCode, translateDbError } from './errors.js';
export {
  type FileConflict,
  insertFileConflicts,
  listFileConflicts,
  type StoredFileConflict,
} from './file-conflicts.js';
export {
  announceKillSwitch,
  KILL_SWITCH_CHANNEL,
  type KillSwitchNotice,
  listenForKillSwitch,
} from './kill-switch-notices.js';
export {
  applyManifestChange,
  blobOwner,
  commitManifestChange,
  deleteManifest,
  FILE_COLUMNS,
  getManifest,
  getManifestEntries,
  getManifestHead,
  getWorkspaceHead,
  listManifestHashes,
  lockManifest,
  type Manifest,
  type ManifestChange,
  type ManifestFile,
  toFile,
  type VersionCounts,
  type VersionedFile,
  type VersionOrigin,
  type WorkspaceHead,
} from './manifest.js';
export { loadMigrations, MIGRATIONS_DIR, type Migration, migrate } from './migrate.js';
export { type DatabaseTarget, openDb } from './open-db.js';
export { pgliteTemplatePath, writePgliteTemplate } from './pglite-template.js';
export {
  type AppendResult,
  appendProcessOutput,
  deleteRunProcesses,
  endProcess,
  getProcess,
  listRunProcesses,
  loseProcesses,
  type NewProcess,
  type OutputRead,
  PROCESS_EVENT_TYPES,
  type ProcessEnd,
  type ProcessOutcome,
  type ProcessRow,
  type ProcessStart,
  type ProcessStatus,
  type ProcessStream,
  readProcessOutput,
  startProcess,
} from './processes.js';
export {
  deleteExpiredAuditEvents,
  deleteExpiredCommands,
  findRemovedCommand,
  type RowRetention,
} from './retention.js';
export {
  getRunNetwork,
  listenForRunNetwork,
  RUN_NETWORK_CHANNEL,
  setRunNetwork,
} from './run-network.js';
export { getRunWorkspace, type RunWorkspace } from './run-workspace.js';
export {
  createRun,
  type FinishRunResult,
  finishRun,
  getRun,
  getRunForOwner,
  isTerminalRunStatus,
  listRunsAwaitingCleanup,
  listRunsForOwner,
  markRunDeleted,
  type NewRun,
  RUN_COLUMNS,
  type Run,
  type RunStatus,
  TERMINAL_RUN_STATUSES,
  type TerminalRunStatus,
  toRun,
} from './runs.js';
export {
  type DiffRow,
  type DiffRowSide,
  diffVersions,
  type ForkOutcome,
  findLabel,
  forkRun,
  getVersion,
  type LabelOutcome,
  listVersions,
  lockKeptVersion,
  manifestAt,
  manifestAtSql,
  manifestPage,
  type PrunedVersions,
  pruneVersions,
  removeLabel,
  runsWithExpiredVersions,
  setLabel,
  type VersionRetention,
  versionChanges,
} from './versions.js';
export {
  ALL_WORKERS,
  type ConsentState,
  listWorkerConsent,
  lowerWorkerScope,
  readConsentState,
  setKillSwitch,
  setWorkerScope,
  toConsent,
  type WorkerConsent,
} from './worker-consent.js';
export {
  type ConsentDecision,
  type ConsentRequestRecord,
  consentCard,
  decideConsentRequest,
  decideConsentRequestIn,
  getConsentRequest,
  listConsentRequests,
  type NewConsentRequest,
  raiseConsentRequest,
} from './worker-consent-requests.js';
export {
  getWorkerHost,
  listWorkerHosts,
  recordWorkerConnected,
  recordWorkerDisconnected,
  touchWorkerLinks,
  WORKER_LINK_FRESH_MS,
  WORKER_LINK_REFRESH_MS,
  type WorkerHostRecord,
} from './worker-hosts.js';
export {
  finishWorkerInvocation,
  getWorkerInvocation,
  insertWorkerInvocation,
  listWorkerInvocations,
  type WorkerInvocation,
} from './worker-invocations.js';
export {
  DEFAULT_BEAT_GAP_MS,
  evidenceParams,
  getWorker,
  heartbeatWorker,
  liveWorkerCondition,
  mayBeLiveWorkerCondition,
  type NodeLiveness,
  nodeLiveness,
  pruneWorkers,
  registerWorker,
  setWorkerStatus,
  type Worker,
  type WorkerStatus,
} from './workers.js';
export {
  adoptUnownedWorkspace,
  getLiveWorkspace,
  getWorkspace,
  getWorkspaceHolder,
  listLiveWorkspacesForNode,
  listLiveWorkspacesOfEndedRuns,
  listRunsHeldByNode,
  listWorkspacesForOwner,
  markRunWorkspacesDeleted,
  ownsWorkspace,
  provisionWorkspace,
  type ReleasedReason,
  releaseHeldWorkspace,
  releaseLiveWorkspace,
  releaseWorkspace,
  toWorkspace,
  WORKSPACE_COLUMNS,
  type Workspace,
  type WorkspaceHolder,
  type WorkspaceStatus,
  workspaceIdFor,
} from './workspaces.js';
