/**
 * The exec allowlist: a parsed command line checked against the policy before the
 * shell sees it (see {@link createCommandChecker}), the environment variables a
 * command may not set, and the allowlist as docs/security.md publishes it
 * ({@link renderAllowlistTable}). The only door into the room: files outside `allowlist/` import
 * from here.
 *
 * @module
 */
export { type AllowlistTableOptions, renderAllowlistTable } from './allowlist-table.js';
export {
  type CommandChecker,
  type CommandNotAllowedPayload,
  createCommandChecker,
  DEFAULT_ALLOWED_PROGRAMS,
  denialPayload,
  FORBIDDEN_BUILTINS,
  SHELLS,
  UNCHECKED_WRAPPERS,
} from './checker.js';
export { createSystemPathResolver } from './path-resolver.js';
export {
  isSensitiveVariable,
  SENSITIVE_VARIABLES,
  SETTABLE_VARIABLES,
} from './sensitive-variables.js';
