/**
 * The two kinds of API token. Consent is a person's act: a model that reads its own
 * `consent_required` answer must not be able to grant itself what it asked for, so the
 * token a tool loop holds cannot decide consent.
 *
 * - **agent**: what a tool loop, the MCP server and `memql` inside a tool loop hold. It
 *   calls actions, reads runs, workers and consent requests, lowers a worker's standing
 *   scope and turns the kill switch on (every move that gives the agent less).
 * - **person**: the user's own credential, used to sign in to the console or from the
 *   CLI in the user's shell. It does everything an agent token does, and also approves
 *   and denies consent requests, raises a standing scope and turns the kill switch off
 *   (every move that gives the agent more, and every decision on a request).
 *
 * @module
 */

/** Every token kind. */
export const TOKEN_KINDS = ['agent', 'person'] as const;

/** A token's kind (see the module comment). */
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** Whether `value` is a token kind. */
export function isTokenKind(value: unknown): value is TokenKind {
  return typeof value === 'string' && (TOKEN_KINDS as readonly string[]).includes(value);
}
