/**
 * The store: the only place that writes SQL. One query family per file; every
 * function takes a {@link Queryable} (the database or an open transaction), so a
 * caller composes them into one transaction when it needs to.
 */
export * from './api-tokens.js';
export * from './artifacts.js';
export * from './audit-events.js';
export * from './blob-refs.js';
export * from './call-keys.js';
export * from './command-answer.js';
export * from './command-lease.js';
export * from './command-recovery.js';
export * from './commands.js';
export { DataDirLockedError, LOCK_FILE } from './data-dir-lock.js';
export type * from './db.js';
export * from './db-continuity.js';
export * from './errors.js';
export * from './file-conflicts.js';
export * from './kill-switch-notices.js';
export * from './manifest.js';
export * from './migrate.js';
export * from './open-db.js';
export { pgliteTemplatePath, writePgliteTemplate } from './pglite-template.js';
export * from './processes.js';
export * from './run-network.js';
export * from './run-workspace.js';
export * from './runs.js';
export * from './versions.js';
export * from './worker-consent.js';
export * from './worker-consent-requests.js';
export * from './worker-hosts.js';
export * from './worker-invocations.js';
export * from './workers.js';
export * from './workspaces.js';
