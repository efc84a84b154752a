/**
 * The node's egress proxy: one endpoint (a Unix socket under `dir`) per run, the node
 * CA, and the TLS interceptor the endpoints share. See the room's door (`index.ts`)
 * for the design.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { checkRunId, type EgressPolicy } from '../../contract/index.js';
import type { EgressEndpoint, EgressProxyOptions } from './egress-types.js';
import { LeafCertificates } from './leaf-certs.js';
import { loadOrCreateCa, type NodeCa } from './node-ca.js';
import { RunEndpoint } from './run-endpoint.js';
import { TlsInterceptor } from './tls-intercept.js';

/** Longest Unix socket path Linux takes (`sun_path` is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

/** A run's socket name: a digest, because a run id may be 128 characters and a path may not. */
export function socketName(runId: string): string {
  return `${createHash('sha256').update(runId).digest('hex').slice(0, 24)}.sock`;
}

/** The egress proxy of one node. */
export class EgressProxy {
  private readonly endpoints = new Map<string, Promise<RunEndpoint>>();
  /** Endpoints still closing: a run opened again waits for its old socket to go. */
  private readonly draining = new Map<string, Promise<void>>();
  private readonly leaves: LeafCertificates;
  private readonly interceptor: TlsInterceptor;
  private caLoad: Promise<NodeCa> | null = null;
  private closed = false;

  constructor(private readonly options: EgressProxyOptions) {
    const longest = join(options.dir, socketName('x')).length;
    if (longest > MAX_SOCKET_PATH) {
      throw new Error(
        `the egress socket directory ${options.dir} is too long for a Unix socket path (${longest} > ${MAX_SOCKET_PATH} bytes); choose a shorter directory`,
      );
    }
    this.leaves = new LeafCertificates(() => this.ca());
    this.interceptor = new TlsInterceptor(this.leaves, options.upstreamCa);
  }

  /** The node CA, loaded (or made) once; a failed load is tried again next time. */
  ca(): Promise<NodeCa> {
    if (this.caLoad === null) {
      const load = loadOrCreateCa(this.options.caDir);
      this.caLoad = load;
      load.catch(() => {
        if (this.caLoad === load) this.caLoad = null;
      });
    }
    return this.caLoad;
  }

  /**
   * One run's endpoint: its socket, served with the policy `policy()` returns at each
   * new connection. Opening a run that is open already shares its socket (and its
   * refusal log); the socket closes when every opener has closed its handle.
   */
  async openRun(runId: string, policy: () => EgressPolicy): Promise<EgressEndpoint> {
    if (this.closed) throw new Error('the egress proxy is closed');
    const problem = checkRunId(runId);
    if (problem !== null) throw new Error(`egress: run id ${problem}`);
    let pending = this.endpoints.get(runId);
    if (pending === undefined) {
      const slot: { pending?: Promise<RunEndpoint> } = {};
      pending = this.start(runId, policy, slot);
      slot.pending = pending;
      this.endpoints.set(runId, pending);
      pending.catch(() => this.endpoints.delete(runId));
    }
    const endpoint = await pending;
    // It may have closed while this opener waited: then open a new one.
    return endpoint.isClosing ? this.openRun(runId, policy) : endpoint.open(policy);
  }

  private async start(
    runId: string,
    policy: () => EgressPolicy,
    slot: { pending?: Promise<RunEndpoint> },
  ): Promise<RunEndpoint> {
    const ca = await this.ca();
    await this.draining.get(runId);
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    const endpoint = new RunEndpoint(
      runId,
      join(this.options.dir, socketName(runId)),
      ca.certPath,
      policy,
      this.options,
      this.interceptor,
      (done) => {
        if (this.endpoints.get(runId) === slot.pending) this.endpoints.delete(runId);
        this.draining.set(runId, done);
        done.finally(() => {
          if (this.draining.get(runId) === done) this.draining.delete(runId);
        });
      },
    );
    await endpoint.listen();
    return endpoint;
  }

  /** Closes every endpoint and their connections. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.endpoints.values()];
    this.endpoints.clear();
    await Promise.all(
      open.map((p) =>
        p.then(
          (e) => e.close(),
          () => undefined,
        ),
      ),
    );
    this.interceptor.close();
  }
}
