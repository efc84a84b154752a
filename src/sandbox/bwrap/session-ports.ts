/**
 * The connections the node opens to ports of a warm sandbox's loopback (servers its
 * background processes run; `bwrap-session.ts`), carried by the agent: each a stream
 * whose bytes go out as requests and come back as the agent's events.
 *
 * @module
 */

import { Duplex, type Writable } from 'node:stream';
import { WorkbenchError } from '../../contract/index.js';
import type { AgentEvent } from './agent-events.js';
import { encodePortClose, encodePortConnect, encodePortData } from './agent-requests.js';
import { AGENT_CHUNK_BYTES } from './session-agent.js';

/** One connection: its stream, and what its opening answer does. */
interface PortConnection {
  readonly conn: Duplex;
  readonly connected: (ok: boolean) => void;
}

/** The open connections of one sandbox, by the session's id for each. */
export class SessionPorts {
  private readonly ports = new Map<number, PortConnection>();
  private nextPortId = 1;

  /** `requests`: the agent's requests descriptor. */
  constructor(private readonly requests: Writable | undefined) {}

  /**
   * Opens a connection to `port`. Rejects with `port_not_listening` when nothing listens
   * there. Ending the stream's write side half-closes the connection; destroying it
   * closes it.
   */
  connect(port: number): Promise<Duplex> {
    const id = this.nextPortId++;
    const requests = this.requests;
    return new Promise((resolve, reject) => {
      const conn = new Duplex({
        write: (chunk: Buffer, _encoding, done) => {
          for (let at = 0; at < chunk.length; at += AGENT_CHUNK_BYTES) {
            requests?.write(encodePortData(id, chunk.subarray(at, at + AGENT_CHUNK_BYTES)));
          }
          done();
        },
        final: (done) => {
          if (this.ports.has(id)) requests?.write(encodePortClose(id, true));
          done();
        },
        read: () => {},
        destroy: (err, done) => {
          if (this.ports.delete(id)) requests?.write(encodePortClose(id, false));
          done(err);
        },
      });
      this.ports.set(id, {
        conn,
        connected: (ok) => {
          if (ok) return resolve(conn);
          this.ports.delete(id);
          reject(
            new WorkbenchError(
              'port_not_listening',
              `port_not_listening: nothing listens on port ${port} in the run's sandbox; start the server with process_start first, and check its output (process_output) for the port it chose`,
              { port },
            ),
          );
        },
      });
      requests?.write(encodePortConnect(id, port));
    });
  }

  /** Takes an event of a connection (opened, bytes, closed); false for any other event. */
  take(event: AgentEvent): boolean {
    if (event.kind === 'port_connected') {
      this.ports.get(event.id)?.connected(event.ok);
      return true;
    }
    if (event.kind === 'port_data') {
      this.ports.get(event.id)?.conn.push(event.chunk);
      return true;
    }
    if (event.kind === 'port_closed') {
      const port = this.ports.get(event.id);
      this.ports.delete(event.id);
      port?.conn.push(null);
      return true;
    }
    return false;
  }

  /** The sandbox ended: a connection still opening is refused, every open one destroyed. */
  closeAll(): void {
    for (const [id, port] of [...this.ports]) {
      this.ports.delete(id);
      port.connected(false);
      port.conn.destroy(new Error('the sandbox ended'));
    }
  }
}
