/**
 * What the growth soak reads of a running mesh, from the outside: each node process's
 * resident memory and open descriptors (`/proc/<pid>`), the replicas' per-sandbox
 * cgroups, the sandboxes and processes under the replicas, the entries of each
 * replica's workbench root, and the database's size and row counts.
 *
 * @module
 */

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { POOL_PREFIX } from '../../src/sandbox/bwrap/index.js';
import { groupCreator, parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import type { Db } from '../../src/store/index.js';

/** Where the cgroup v1 controllers are mounted. */
const CGROUP_ROOT = '/sys/fs/cgroup';
/** The group the runner makes under a node's own cgroup (the cgroups module's default). */
const GROUP_NAME = 'memql';
/** The controllers the runner makes a sandbox's groups under. */
const CONTROLLERS = ['pids', 'memory', 'cpu'] as const;

/** Resident memory (bytes) and open descriptors of one process; zeros once it is gone. */
export async function processCost(pid: number): Promise<{ rss: number; fds: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
  return { rss: Number(kb ?? 0) * 1024, fds: fds.length };
}

/**
 * The parent groups (one per controller) under which the processes `pids` make their
 * sandboxes' groups: `<mount>/<their own cgroup>/memql`. Replicas started from one
 * process share them.
 */
export async function cgroupParents(pids: readonly number[]): Promise<string[]> {
  const parents = new Set<string>();
  for (const pid of pids) {
    const text = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
    const membership = parseCgroupMembership(text);
    for (const c of CONTROLLERS) {
      parents.add(join(CGROUP_ROOT, c, membership.get(c) ?? '/', GROUP_NAME));
    }
  }
  return [...parents];
}

/**
 * Sandbox groups made by the processes `creators` (a group is named after its creator's
 * pid, so other nodes on this host sharing the parent are not counted), as distinct
 * names across the controllers: one per sandbox, and a group left in any one
 * controller counts.
 */
export async function countGroups(
  parents: readonly string[],
  creators: ReadonlySet<number>,
): Promise<number> {
  const names = new Set<string>();
  for (const parent of parents) {
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const creator = e.isDirectory() ? groupCreator(e.name) : null;
      if (creator !== null && creators.has(creator)) names.add(e.name);
    }
  }
  return names.size;
}

/** Every process's parent pid and command name, from `/proc/<pid>/stat`. */
async function processTable(): Promise<Map<number, { ppid: number; comm: string }>> {
  const table = new Map<number, { ppid: number; comm: string }>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => null);
    if (stat === null) continue;
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    table.set(Number(name), { ppid, comm });
  }
  return table;
}

/**
 * The sandboxes under the processes `roots` (bwrap processes without a bwrap ancestor:
 * bwrap forks itself inside its namespaces), and every process under them, sandboxes'
 * launchers, agents and commands included.
 */
export async function sandboxCensus(
  roots: ReadonlySet<number>,
): Promise<{ sandboxes: number; processes: number }> {
  const table = await processTable();
  let sandboxes = 0;
  let processes = 0;
  for (const [pid, { comm }] of table) {
    let bwrapAbove = false;
    let under = false;
    for (let up = table.get(pid)?.ppid, hops = 0; up !== undefined && hops < 64; hops++) {
      if (roots.has(up)) {
        under = true;
        break;
      }
      const parent = table.get(up);
      if (parent === undefined) break;
      if (parent.comm === 'bwrap') bwrapAbove = true;
      up = parent.ppid;
    }
    if (!under || roots.has(pid)) continue;
    processes += 1;
    if (comm === 'bwrap' && !bwrapAbove) sandboxes += 1;
  }
  return { sandboxes, processes };
}

/** The entries of a workbench root: warm pool directories, and everything else by name. */
export async function rootEntries(dir: string): Promise<{ pool: number; others: string[] }> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const pool = names.filter((n) => n.startsWith(POOL_PREFIX)).length;
  return { pool, others: names.filter((n) => !n.startsWith(POOL_PREFIX)) };
}

/** The database's size and the rows of the tables whose growth the soak bounds. */
export async function databaseCost(
  db: Db,
): Promise<{ bytes: number; commands: number; audit: number }> {
  const [row] = await db.query<{ bytes: string; commands: number; audit: number }>(
    `select pg_database_size(current_database())::text as bytes,
       (select count(*)::int from workspace_command) as commands,
       (select count(*)::int from audit_event) as audit`,
  );
  return { bytes: Number(row?.bytes ?? 0), commands: row?.commands ?? 0, audit: row?.audit ?? 0 };
}

/** Each table of the schema's rows and bytes (indexes and TOAST included): what is kept, to read. */
export async function tableCosts(
  db: Db,
): Promise<Record<string, { rows: number; bytes: number; deadRows: number }>> {
  const tables = await db.query<{ name: string; bytes: string; dead: string | null }>(
    `select t.table_name as name, pg_total_relation_size(quote_ident(t.table_name))::text as bytes,
       s.n_dead_tup::text as dead
     from information_schema.tables t
     left join pg_stat_user_tables s on s.relname = t.table_name and s.schemaname = t.table_schema
     where t.table_schema = current_schema() and t.table_type = 'BASE TABLE'
     order by pg_total_relation_size(quote_ident(t.table_name)) desc`,
  );
  const costs: Record<string, { rows: number; bytes: number; deadRows: number }> = {};
  for (const { name, bytes, dead } of tables) {
    const [r] = await db.query<{ n: number }>(`select count(*)::int as n from "${name}"`);
    costs[name] = { rows: r?.n ?? 0, bytes: Number(bytes), deadRows: Number(dead ?? 0) };
  }
  return costs;
}

/** Rows of the runs `runIds` left in the command and audit tables (none once deleted). */
export async function rowsOfRuns(
  db: Db,
  runIds: readonly string[],
): Promise<{ commands: number; audit: number }> {
  const [row] = await db.query<{ commands: number; audit: number }>(
    `select (select count(*)::int from workspace_command where run_id = any($1)) as commands,
       (select count(*)::int from audit_event where run_id = any($1)) as audit`,
    [runIds],
  );
  return { commands: row?.commands ?? 0, audit: row?.audit ?? 0 };
}
