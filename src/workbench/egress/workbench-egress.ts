/**
 * A workbench node's egress: the node's proxy (`sandbox/egress`), the runs' policies
 * (`run-egress-policy.ts`), the sandbox trust bundle, the runs' package caches and the
 * audit rows, put together for the command executor.
 *
 * - A command gets the network when its run's policy, read as it starts, allows any
 *   host ({@link WorkbenchEgress.forCommand}); the proxy then reads the policy again at
 *   each new connection, so a change to a run with network applies to the next
 *   connection of the running command. A run given network while a command runs gets it
 *   from its next command.
 * - Each run keeps one endpoint (its socket) from its first command with network until
 *   the run is let go of here ({@link WorkbenchEgress.releaseRun}): its end, deletion or
 *   move to another node.
 * - Its package caches (`/run/memql/cache`: pip, npm, `XDG_CACHE_HOME`) live under this
 *   node's state directory, outside the workspace, so no sync uploads them; they go with
 *   the run's endpoint, and all of them when the node starts.
 * - The command's result gets `egress.refused`: what the proxy refused while it ran.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CidrRange,
  type CommandEgress,
  type EgressBounds,
  type EgressPolicy,
  MAX_EGRESS_REFUSALS,
} from '../../contract/index.js';
import type { SandboxEgress } from '../../sandbox/index.js';
import {
  type EgressConnection,
  type EgressEndpoint,
  EgressProxy,
  type EgressSecret,
  systemResolve,
} from '../../sandbox/index.js';
import type { Db } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { type EgressAttribution, EgressAudit } from './egress-audit.js';
import { RunEgressPolicies } from './run-egress-policy.js';
import { writeTrustBundle } from './trust-bundle.js';

/** Options of {@link WorkbenchEgress.create}. */
export interface WorkbenchEgressOptions {
  readonly db: Db;
  /**
   * The node's egress state directory (sockets, CA, caches, trust bundle): outside
   * every workspace, e.g. `<workbench root>/.egress`.
   */
  readonly dir: string;
  /** This node's ceiling and secret names (`MEMQL_EGRESS_CEILING`, `MEMQL_EGRESS_SECRETS`). */
  readonly bounds: EgressBounds;
  /** The operator's secrets, with their values. */
  readonly secrets: readonly EgressSecret[];
  /** `MEMQL_FETCH_ALLOW_PRIVATE`. */
  readonly allowPrivate: readonly CidrRange[];
  /** `MEMQL_EGRESS_RESOLVE`: names resolved to these addresses instead of by DNS. */
  readonly hosts?: readonly { host: string; address: string }[];
  /** `MEMQL_EGRESS_CA_FILE`'s certificates, trusted upstream and in every sandbox. */
  readonly extraCaPem?: string | null;
  /** Owner of the cache directories: the sandbox uid when the node runs as root. */
  readonly fileOwner?: { uid: number; gid: number };
  /** The system CA bundle to build on (default Debian's). */
  readonly systemCaBundle?: string;
  /** How often the proxy reads a run's policy again (default 2000 ms). */
  readonly policyMaxAgeMs?: number;
  readonly log: Logger;
}

/** A command's network, from {@link WorkbenchEgress.forCommand}. */
export interface CommandNetwork {
  /** What the runner binds into the sandbox. */
  readonly egress: SandboxEgress;
  /** Ends the command's share: what was refused since it started. Call once. */
  finish(): CommandEgress;
}

/** The command a network is opened for. */
export interface NetworkCommand {
  readonly id: string;
  readonly runId: string;
  readonly ownerUserId: string;
  readonly workspaceId: string | null;
}

interface RunState {
  readonly endpoint: Promise<EgressEndpoint>;
  readonly cacheDir: string;
  owner: { ownerUserId: string; workspaceId: string | null };
  /** Commands with network, by id: when each began (performance.now) and ended. */
  readonly commands: Map<string, { begun: number; ended: number | null }>;
}

/** Short, fixed-length directory name of a run (run ids may be 128 characters). */
function runDirName(runId: string): string {
  return createHash('sha256').update(runId).digest('hex').slice(0, 24);
}

/** The longest a socket directory may be (the proxy refuses longer). */
const MAX_SOCKET_DIR = 80;

/** See the module comment. */
export class WorkbenchEgress {
  readonly #options: WorkbenchEgressOptions;
  readonly #proxy: EgressProxy;
  readonly #policies: RunEgressPolicies;
  readonly #audit: EgressAudit;
  readonly #runs = new Map<string, RunState>();
  #bundle: Promise<string> | null = null;

  private constructor(options: WorkbenchEgressOptions, socketDir: string) {
    this.#options = options;
    const hosts = new Map<string, string[]>();
    for (const { host, address } of options.hosts ?? []) {
      hosts.set(host, [...(hosts.get(host) ?? []), address]);
    }
    this.#audit = new EgressAudit(options.db, options.log);
    this.#policies = new RunEgressPolicies({
      db: options.db,
      bounds: options.bounds,
      log: options.log,
      ...(options.policyMaxAgeMs !== undefined ? { maxAgeMs: options.policyMaxAgeMs } : {}),
    });
    this.#proxy = new EgressProxy({
      dir: socketDir,
      caDir: join(options.dir, 'ca'),
      resolve: async (host) => hosts.get(host) ?? systemResolve(host),
      allowPrivate: options.allowPrivate,
      secrets: options.secrets,
      ...(options.extraCaPem ? { upstreamCa: [options.extraCaPem] } : {}),
      onConnection: (c) => this.#connectionEnded(c),
      log: options.log,
    });
  }

  /**
   * Makes the node's egress: clears what an earlier process of the node left (sockets,
   * caches), and starts hearing policy changes other nodes make.
   */
  static async create(options: WorkbenchEgressOptions): Promise<WorkbenchEgress> {
    const inDir = join(options.dir, 's');
    // A deep state directory cannot hold Unix sockets (108 bytes): use a short one then.
    const socketDir =
      inDir.length <= MAX_SOCKET_DIR
        ? inDir
        : join('/tmp', `memql-egress-${runDirName(options.dir).slice(0, 12)}`);
    await rm(socketDir, { recursive: true, force: true });
    await rm(join(options.dir, 'caches'), { recursive: true, force: true });
    // bwrap binds these paths as the sandbox uid, so it must pass through the parents
    // (search only: 0711) and own the socket directory, which keeps every other user out.
    await mkdir(options.dir, { recursive: true, mode: 0o711 });
    await chmod(options.dir, 0o711);
    await mkdir(join(options.dir, 'caches'), { mode: 0o711 });
    await chmod(join(options.dir, 'caches'), 0o711);
    await mkdir(socketDir, { recursive: true, mode: 0o700 });
    const owner = options.fileOwner;
    if (owner) await chown(socketDir, owner.uid, owner.gid);
    const egress = new WorkbenchEgress(options, socketDir);
    await egress.#policies.listen();
    return egress;
  }

  /**
   * The network of one command that is about to start, or null when its run has none
   * (or its policy cannot be read now: the command then runs without network, as a run
   * without one does).
   */
  async forCommand(command: NetworkCommand): Promise<CommandNetwork | null> {
    let policy: EgressPolicy;
    try {
      policy = await this.#policies.read(command.runId);
    } catch {
      return null;
    }
    if (policy.allow.length === 0) return null;
    const run = await this.#run(command);
    const [endpoint, caBundlePath] = await Promise.all([run.endpoint, this.#trustBundle()]);
    const mark = endpoint.mark();
    run.commands.set(command.id, { begun: performance.now(), ended: null });
    let finished: CommandEgress | null = null;
    return {
      egress: { socketPath: endpoint.socketPath, caBundlePath, cacheDir: run.cacheDir },
      finish: () => {
        if (finished !== null) return finished;
        const entry = run.commands.get(command.id);
        if (entry) entry.ended = performance.now();
        finished = { refused: endpoint.refusedSince(mark).slice(0, MAX_EGRESS_REFUSALS) };
        return finished;
      },
    };
  }

  /** A change this node's API made to a run's network: in force from the next connection. */
  changed(runId: string, policy: EgressPolicy): void {
    this.#policies.changed(runId, policy);
  }

  /** Lets go of a run here: its endpoint (and its connections), its policy and caches. */
  async releaseRun(runId: string): Promise<void> {
    this.#policies.forget(runId);
    const run = this.#runs.get(runId);
    if (run === undefined) return;
    this.#runs.delete(runId);
    await run.endpoint.then(
      (e) => e.close(),
      () => undefined,
    );
    await rm(run.cacheDir, { recursive: true, force: true });
  }

  /** Resolves once the audit rows of the connections ended so far are written (or lost). */
  auditSettled(): Promise<void> {
    return this.#audit.settled();
  }

  /** Closes every endpoint, stops hearing changes, and waits for the audit rows. */
  async close(): Promise<void> {
    await this.#proxy.close();
    await this.#policies.close();
    await this.#audit.settled();
    this.#runs.clear();
  }

  async #run(command: NetworkCommand): Promise<RunState> {
    const owner = { ownerUserId: command.ownerUserId, workspaceId: command.workspaceId };
    const known = this.#runs.get(command.runId);
    if (known !== undefined) {
      known.owner = owner;
      return known;
    }
    const cacheDir = join(this.#options.dir, 'caches', runDirName(command.runId));
    const endpoint = this.#proxy.openRun(command.runId, this.#policies.policyOf(command.runId));
    const state: RunState = { endpoint, cacheDir, owner, commands: new Map() };
    this.#runs.set(command.runId, state);
    endpoint.catch(() => {
      if (this.#runs.get(command.runId) === state) this.#runs.delete(command.runId);
    });
    await mkdir(cacheDir, { recursive: true, mode: 0o700 });
    const fileOwner = this.#options.fileOwner;
    if (fileOwner) await chown(cacheDir, fileOwner.uid, fileOwner.gid);
    return state;
  }

  #trustBundle(): Promise<string> {
    if (this.#bundle === null) {
      const made = this.#proxy.ca().then((ca) =>
        writeTrustBundle(join(this.#options.dir, 'ca-bundle.pem'), {
          nodeCaPath: ca.certPath,
          extraPem: this.#options.extraCaPem ?? null,
          ...(this.#options.systemCaBundle ? { systemBundle: this.#options.systemCaBundle } : {}),
        }),
      );
      this.#bundle = made;
      made.catch(() => {
        if (this.#bundle === made) this.#bundle = null;
      });
    }
    return this.#bundle;
  }

  #connectionEnded(c: EgressConnection): void {
    const run = this.#runs.get(c.runId);
    if (run === undefined) return; // let go of meanwhile: its owner is not known here
    this.#audit.record(c, this.#attribute(run, c));
  }

  /** The connection's command: the one (of its run) that was running when it began, if one. */
  #attribute(run: RunState, c: EgressConnection): EgressAttribution {
    const begun = performance.now() - c.durationMs;
    const during = [...run.commands].filter(
      ([, t]) => t.begun <= begun && (t.ended === null || begun <= t.ended),
    );
    // Commands long ended are forgotten; a few are kept for connections that outlive them.
    for (const [id, t] of run.commands) {
      if (t.ended !== null && performance.now() - t.ended > 60_000) run.commands.delete(id);
    }
    return { ...run.owner, commandId: during.length === 1 ? during[0]![0] : null };
  }
}
