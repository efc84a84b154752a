/**
 * The workbench host: the actions on a run's workspace, in the order of the dispatch
 * pipeline, over the store, the object store and a sandbox runner. Its rooms
 * (`actions/`, `allowlist/`, `fetch/`, `sync/`, `egress/`, `processes/`, `lifecycle/`)
 * are entered through their own doors; this door is what the rest of the system uses.
 *
 * ```ts
 * const built = await createWorkbenchHost(config, { db, log, platform, runsAsRoot });
 * const result = await built.host.handleDispatch(envelope, authority);
 * ```
 *
 * @packageDocumentation
 */
export type { WorkbenchHost } from './host.js';
export { type BuiltHost, createWorkbenchHost } from './host-factory.js';
export { deleteRunData, endRun } from './lifecycle/index.js';
