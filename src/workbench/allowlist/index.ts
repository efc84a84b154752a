/**
 * The exec allowlist: a parsed command line checked against the policy before the
 * shell sees it (see {@link createCommandChecker}), and the environment variables a
 * command may not set. The only door into the room: files outside `allowlist/` import
 * from here.
 *
 * @module
 */
export { type CommandChecker, createCommandChecker, denialPayload } from './checker.js';
export { createSystemPathResolver } from './path-resolver.js';
export {
  isSensitiveVariable,
  SENSITIVE_VARIABLES,
  SETTABLE_VARIABLES,
} from './sensitive-variables.js';
