/**
 * What makes two calls with one `callId` the same call: their action, arguments and
 * environment hint, as parsed (so defaults and key order never tell two spellings of
 * one call apart). Who sent it (`agentId`, `taskId`) is not part of it: a retry from
 * another process of the same tool loop is the same call.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import type { Envelope } from './envelope.js';

/** JSON with object keys sorted at every depth; `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The hex SHA-256 of a call's action, arguments and environment hint. */
export function callDigest(envelope: Pick<Envelope, 'action' | 'args' | 'environment'>): string {
  return createHash('sha256')
    .update(
      canonicalJson({
        action: envelope.action,
        args: envelope.args,
        environment: envelope.environment ?? null,
      }),
    )
    .digest('hex');
}
