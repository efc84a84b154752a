/**
 * The agent's events (`session-agent.pl`) as the node reads them off its events
 * descriptor: each frame a kind byte and fixed fields, output with its length (the
 * whole list is at the top of the agent). The agent's frames are untrusted input.
 *
 * @module
 */

import type { OutputStream } from '../../contract/index.js';
import { AGENT_CHUNK_BYTES } from './session-agent.js';

/** One event from the agent. */
export type AgentEvent =
  | { readonly kind: 'ready' }
  | { readonly kind: 'output'; readonly stream: OutputStream; readonly chunk: Buffer }
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: number | null }
  | { readonly kind: 'done'; readonly reusable: boolean }
  | { readonly kind: 'process_started'; readonly id: number; readonly pid: number }
  | {
      readonly kind: 'process_output';
      readonly id: number;
      readonly stream: OutputStream;
      readonly chunk: Buffer;
    }
  | { readonly kind: 'port_connected'; readonly id: number; readonly ok: boolean }
  | { readonly kind: 'port_data'; readonly id: number; readonly chunk: Buffer }
  | { readonly kind: 'port_closed'; readonly id: number }
  | {
      readonly kind: 'process_exit';
      readonly id: number;
      readonly code: number | null;
      readonly signal: number | null;
    };

/**
 * Reads the agent's events out of the bytes of its descriptor as they arrive. Anything
 * that is not a well-formed frame (an unknown kind, an output piece over
 * {@link AGENT_CHUNK_BYTES}) is a broken agent: {@link AgentEventReader.push} throws, and
 * the node ends the sandbox.
 */
export class AgentEventReader {
  private pending: Buffer = Buffer.alloc(0);

  /** Adds bytes; returns the events now complete, in order. */
  push(bytes: Buffer): AgentEvent[] {
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const events: AgentEvent[] = [];
    for (;;) {
      const event = this.next();
      if (event === null) return events;
      events.push(event);
    }
  }

  private take(n: number): Buffer {
    const head = this.pending.subarray(0, n);
    this.pending = this.pending.subarray(n);
    return head;
  }

  private next(): AgentEvent | null {
    const p = this.pending;
    if (p.length === 0) return null;
    switch (String.fromCharCode(p[0]!)) {
      case 'S':
        this.take(1);
        return { kind: 'ready' };
      case 'O': {
        if (p.length < 6) return null;
        const stream = p[1];
        const length = p.readUInt32BE(2);
        if ((stream !== 1 && stream !== 2) || length === 0 || length > AGENT_CHUNK_BYTES) {
          throw new Error('the sandbox agent sent a malformed output frame');
        }
        if (p.length < 6 + length) return null;
        const frame = this.take(6 + length);
        return {
          kind: 'output',
          stream: stream === 1 ? 'stdout' : 'stderr',
          chunk: Buffer.from(frame.subarray(6)),
        };
      }
      case 'X': {
        if (p.length < 9) return null;
        const frame = this.take(9);
        const code = frame.readInt32BE(1);
        const signal = frame.readInt32BE(5);
        return code < 0
          ? { kind: 'exit', code: null, signal }
          : { kind: 'exit', code, signal: null };
      }
      case 'D': {
        if (p.length < 2) return null;
        return { kind: 'done', reusable: this.take(2)[1] === 1 };
      }
      case 'G': {
        if (p.length < 6) return null;
        const f = this.take(6);
        return { kind: 'port_connected', id: f.readUInt32BE(1), ok: f[5] === 1 };
      }
      case 'H': {
        if (p.length < 9) return null;
        const length = p.readUInt32BE(5);
        if (length === 0 || length > AGENT_CHUNK_BYTES) {
          throw new Error('the sandbox agent sent a malformed port data frame');
        }
        if (p.length < 9 + length) return null;
        const f = this.take(9 + length);
        return { kind: 'port_data', id: f.readUInt32BE(1), chunk: Buffer.from(f.subarray(9)) };
      }
      case 'J': {
        if (p.length < 5) return null;
        return { kind: 'port_closed', id: this.take(5).readUInt32BE(1) };
      }
      case 'P': {
        if (p.length < 9) return null;
        const f = this.take(9);
        return { kind: 'process_started', id: f.readUInt32BE(1), pid: f.readInt32BE(5) };
      }
      case 'Q': {
        if (p.length < 10) return null;
        const stream = p[5];
        const length = p.readUInt32BE(6);
        if ((stream !== 1 && stream !== 2) || length === 0 || length > AGENT_CHUNK_BYTES) {
          throw new Error('the sandbox agent sent a malformed process output frame');
        }
        if (p.length < 10 + length) return null;
        const f = this.take(10 + length);
        return {
          kind: 'process_output',
          id: f.readUInt32BE(1),
          stream: stream === 1 ? 'stdout' : 'stderr',
          chunk: Buffer.from(f.subarray(10)),
        };
      }
      case 'Y': {
        if (p.length < 13) return null;
        const f = this.take(13);
        const id = f.readUInt32BE(1);
        const code = f.readInt32BE(5);
        const signal = f.readInt32BE(9);
        return code < 0
          ? { kind: 'process_exit', id, code: null, signal }
          : { kind: 'process_exit', id, code, signal: null };
      }
      default:
        throw new Error('the sandbox agent sent an unknown frame');
    }
  }
}
