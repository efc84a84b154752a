/**
 * The consent ladder a user sets per worker host: `none < observe < full`. `observe`
 * permits only reading actions; `full` permits every action a worker serves.
 *
 * @module
 */

/** The consent ladder, lowest first. */
export const SCOPES = ['none', 'observe', 'full'] as const;

/** A rung of the consent ladder. */
export type Scope = (typeof SCOPES)[number];

/** Whether `value` is a rung of the ladder. */
export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Whether a standing scope `held` is at or above `required`. */
export function scopeCovers(held: Scope, required: Scope): boolean {
  return SCOPES.indexOf(held) >= SCOPES.indexOf(required);
}

/** The higher of two rungs. */
export function higherScope(a: Scope, b: Scope): Scope {
  return SCOPES.indexOf(a) >= SCOPES.indexOf(b) ? a : b;
}
