/**
 * The HTTP API for tool loops and the operator console page, served by agent nodes
 * (and by the local node, which is an agent and a workbench in one process).
 *
 * @packageDocumentation
 */

export * from './api-deps.js';
export * from './api-server.js';
export * from './auth.js';
export * from './dev-token.js';
export * from './fleet.js';
export * from './readiness.js';
export * from './release-reasons.js';
export * from './worker-directory.js';
