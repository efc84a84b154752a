/**
 * Authority: on whose behalf a call runs, and the gate that keeps `build` system-only.
 *
 * The class is the gate. Tool-loop calls carry the calling user's own authority; only
 * trusted node code (the deploy pipeline's entry) mints a system authority, through
 * {@link systemAuthority}, which refuses a user subject. A system authority is
 * recognised by membership in a module-private set, not by its fields, so an object
 * literal `{ class: 'system', subject: 'system:deploy' }` (from JSON, a model, or a
 * careless spread) is not one.
 *
 * Subjects are namespaced strings: `user:<id>` for people, `system:<name>` for the
 * platform's own principals (`system:deploy`). The prefix decides what a subject is.
 *
 * @module
 */

import { type ActionName, isToolActionName } from './actions.js';
import { WorkbenchError } from './errors.js';
import { type DispatchFailure, errorResult } from './result.js';

/** The two classes of authority. */
export type AuthorityClass = 'user' | 'system';

/** On whose behalf a call runs. Immutable; build one with the constructors below. */
export interface Authority {
  /** `user` for tool-loop calls, `system` for the platform's own pipelines. */
  readonly class: AuthorityClass;
  /** The namespaced subject, `user:<id>` or `system:<name>`. */
  readonly subject: string;
}

/** Prefix of every user subject. */
export const USER_SUBJECT_PREFIX = 'user:';
/** Prefix of every system subject. */
export const SYSTEM_SUBJECT_PREFIX = 'system:';
/** Longest accepted subject, in characters. */
export const MAX_SUBJECT_CHARS = 256;

/** User ids come from elsewhere (UUIDs, emails), so only printable, spaceless text is required. */
const USER_SUBJECT = /^user:[\x21-\x7e]+$/;
/** System principals are ours to name, so the rule is tight. */
const SYSTEM_SUBJECT = /^system:[a-z0-9][a-z0-9._-]*$/;

/** Authorities minted by {@link systemAuthority}; nothing else can add to it. */
const mintedSystemAuthorities = new WeakSet<Authority>();

/** Whether `subject` names a user (it starts with `user:`). */
export function isUserSubject(subject: string): boolean {
  return subject.startsWith(USER_SUBJECT_PREFIX);
}

/**
 * The authority of a user, for tool-loop calls.
 *
 * @param subject - `user:<id>`, printable ASCII without spaces, at most 256 characters.
 * @throws WorkbenchError `invalid_arguments` when `subject` is not a user subject.
 */
export function userAuthority(subject: string): Authority {
  if (subject.length > MAX_SUBJECT_CHARS || !USER_SUBJECT.test(subject)) {
    throw new WorkbenchError(
      'invalid_arguments',
      `invalid_arguments: authority subject ${JSON.stringify(subject)} is not a user subject ("user:<id>")`,
    );
  }
  return Object.freeze({ class: 'user', subject });
}

/**
 * The authority of a platform principal. The only way to obtain an authority that
 * {@link isSystemAuthority} accepts; call it only from trusted node code, never with
 * anything a tool loop supplied.
 *
 * @param subject - `system:<name>`, `<name>` in lower-case letters, digits, `.`, `_`, `-`.
 * @throws WorkbenchError `forbidden` for a user subject (a user can never be promoted to
 *   system), `invalid_arguments` for anything else that is not a system subject.
 */
export function systemAuthority(subject: string): Authority {
  if (isUserSubject(subject)) {
    throw new WorkbenchError(
      'forbidden',
      `forbidden: a system authority cannot be made for user subject ${JSON.stringify(subject)}`,
    );
  }
  if (subject.length > MAX_SUBJECT_CHARS || !SYSTEM_SUBJECT.test(subject)) {
    throw new WorkbenchError(
      'invalid_arguments',
      `invalid_arguments: authority subject ${JSON.stringify(subject)} is not a system subject ("system:<name>")`,
    );
  }
  const authority: Authority = Object.freeze({ class: 'system', subject });
  mintedSystemAuthorities.add(authority);
  return authority;
}

/** Whether `value` is a system authority minted by {@link systemAuthority}. */
export function isSystemAuthority(value: unknown): value is Authority {
  return (
    typeof value === 'object' && value !== null && mintedSystemAuthorities.has(value as Authority)
  );
}

/**
 * Check that `authority` may call `action`. Returns `null` when it may, otherwise the
 * `build_not_permitted` failure. Only the system-only actions (`build`) are gated:
 * every other action is open to every caller, its blast radius being the run's own
 * workspace. Both the agent node
 * (before forwarding) and the workbench node (defence in depth) call this.
 */
export function checkActionAuthority(
  action: ActionName,
  authority: Authority | undefined,
): DispatchFailure | null {
  if (isToolActionName(action) || isSystemAuthority(authority)) return null;
  return errorResult(
    'build_not_permitted',
    `build_not_permitted: the ${action} action needs a system-class authority and is not available to tool loops`,
  );
}
