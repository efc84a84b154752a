/**
 * The agent's view of its workbench replicas. Seeds from `MEMQL_WORKER_PEERS` are
 * resolved to every address they have (a headless Service answers one per replica),
 * one {@link PeerConnection} is kept per address, and the seeds are re-resolved
 * periodically so replicas that appear are dialled and replicas that vanish are
 * dropped. A failed resolution keeps what the seed resolved to before.
 *
 * @module
 */

import { lookup } from 'node:dns/promises';
import type { MeshTlsConfig, PeerSeed } from '../config/index.js';
import type { Logger } from '../telemetry/index.js';
import type { BackoffOptions } from './backoff.js';
import { nextChange } from './change-wait.js';
import type { HelloFrame } from './frames.js';
import { RESOLVE_INTERVAL_MS } from './limits.js';
import { endpointKey } from './node-dialer.js';
import { PeerConnection, type PeerEndpoint } from './peer-connection.js';
import type { PeerView } from './peer-picker.js';

/** Resolves one seed to the endpoints of its replicas. Injected by tests. */
export type PeerResolver = (seed: PeerSeed) => Promise<PeerEndpoint[]>;

/** The production resolver: every address of the seed's host (`dns.lookup`, all), at the seed's port. */
export const dnsResolver: PeerResolver = async (seed) => {
  const addresses = await lookup(seed.host, { all: true });
  return addresses.map((a) => ({ host: a.address, port: seed.port, serverName: seed.host }));
};

/** Options of {@link PeerRegistry}. */
export interface PeerRegistryOptions {
  /** The seeds to dial; all of one node type. */
  readonly seeds: readonly PeerSeed[];
  readonly self: Omit<HelloFrame, 'kind'>;
  readonly token: string | null;
  readonly tls: MeshTlsConfig | null;
  readonly log: Logger;
  /** Default {@link dnsResolver}. */
  readonly resolver?: PeerResolver;
  /** Re-resolve period, ms. Default {@link RESOLVE_INTERVAL_MS}. */
  readonly resolveIntervalMs?: number;
  readonly backoff?: BackoffOptions;
  readonly random?: () => number;
  readonly now?: () => number;
  readonly healthStaleMs?: number;
}

/** A replica as the operator console shows it: its view, and since when its stream is up. */
export interface FleetPeerView extends PeerView {
  /** When the current stream said hello (ms since the epoch); `null` while not connected. */
  readonly connectedSince: number | null;
}

/** Every replica behind a set of seeds, one stream each. */
export class PeerRegistry {
  private readonly connections = new Map<string, PeerConnection>();
  private readonly lastResolved = new Map<PeerSeed, PeerEndpoint[]>();
  private readonly listeners = new Set<() => void>();
  /** Per stream key: when it was first seen connected since it last was not. */
  private readonly upSince = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly log: Logger;

  constructor(private readonly options: PeerRegistryOptions) {
    this.log = options.log.child({ component: 'peer-registry' });
  }

  /** Resolves the seeds, dials every replica, and starts re-resolving. */
  async start(): Promise<void> {
    await this.resolveNow();
    const every = this.options.resolveIntervalMs ?? RESOLVE_INTERVAL_MS;
    this.timer = setInterval(() => {
      this.resolveNow().catch((err: unknown) => this.log.error({ err }, 're-resolve failed'));
    }, every);
    this.timer.unref();
  }

  /** Resolves every seed once and reconciles the streams with the answer. */
  async resolveNow(): Promise<void> {
    const resolver = this.options.resolver ?? dnsResolver;
    const wanted = new Map<string, PeerEndpoint>();
    for (const seed of this.options.seeds) {
      let endpoints: PeerEndpoint[];
      try {
        endpoints = await resolver(seed);
        this.lastResolved.set(seed, endpoints);
      } catch (err) {
        endpoints = this.lastResolved.get(seed) ?? [];
        this.log.warn(
          { seed: seed.raw, err: (err as Error).message, keeping: endpoints.length },
          'seed did not resolve; keeping its previous addresses',
        );
      }
      for (const e of endpoints) wanted.set(endpointKey(e), e);
    }
    if (this.closed) return;
    let changed = false;
    for (const [key, endpoint] of wanted) {
      if (this.connections.has(key)) continue;
      const connection = new PeerConnection({
        endpoint,
        self: this.options.self,
        token: this.options.token,
        tls: this.options.tls,
        log: this.options.log,
        onChange: () => this.changed(),
        ...(this.options.backoff ? { backoff: this.options.backoff } : {}),
        ...(this.options.random ? { random: this.options.random } : {}),
        ...(this.options.now ? { now: this.options.now } : {}),
        ...(this.options.healthStaleMs ? { healthStaleMs: this.options.healthStaleMs } : {}),
      });
      this.connections.set(key, connection);
      this.log.info({ peer: key, serverName: endpoint.serverName }, 'replica found; dialling');
      connection.start();
      changed = true;
    }
    for (const [key, connection] of this.connections) {
      if (wanted.has(key)) continue;
      this.log.info({ peer: key, nodeId: connection.nodeId }, 'replica gone from DNS; dropping');
      connection.close();
      this.connections.delete(key);
      changed = true;
    }
    if (changed) this.changed();
  }

  /** Every replica's state, as of now. */
  views(): PeerView[] {
    return [...this.connections.values()].map((c) => c.view());
  }

  /** Every replica's state with the time its current stream came up, for the console. */
  fleetViews(): FleetPeerView[] {
    this.noteConnections();
    return this.views().map((v) => ({ ...v, connectedSince: this.upSince.get(v.key) ?? null }));
  }

  /** The stream to the replica with this key. */
  connection(key: string): PeerConnection | undefined {
    return this.connections.get(key);
  }

  /** Resolves at the next change of any replica's state, or after `ms`. */
  waitForChange(ms: number): Promise<void> {
    return nextChange(this.listeners, ms);
  }

  /** Closes every stream and stops re-resolving. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
    this.changed();
  }

  private noteConnections(): void {
    const now = (this.options.now ?? Date.now)();
    for (const [key, c] of this.connections) {
      if (!c.view().connected) this.upSince.delete(key);
      else if (!this.upSince.has(key)) this.upSince.set(key, now);
    }
    for (const key of this.upSince.keys()) if (!this.connections.has(key)) this.upSince.delete(key);
  }

  private changed(): void {
    this.noteConnections();
    for (const listener of [...this.listeners]) listener();
  }
}
