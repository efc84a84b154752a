/**
 * Workspaces and runs over time: holding a run's workspace (provision, adopt, take
 * over, hand off) under its run lock, ending and deleting runs, and the cleanup
 * sweeper. The only door into the room: files outside `lifecycle/` import from here.
 *
 * @module
 */
export { startSweeper, sweepOnce } from './cleanup-sweeper.js';
export { deleteRunData, endRun } from './run-lifecycle.js';
export { RunLocks } from './run-locks.js';
export { type HeldCopy, nodeStoppingRefusal, WorkspaceAccess } from './workspace-access.js';
export { WorkspaceHandoff } from './workspace-handoff.js';
