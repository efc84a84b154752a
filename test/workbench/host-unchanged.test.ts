import t from 'tap';
import { type Db, getManifestHead, type Queryable } from '../../src/store/index.js';
import { bwrapHost } from '../support/bwrap-host.js';

/**
 * What a call costs when nothing changed, on a real host (real Postgres, the fs store,
 * real bwrap): a node that holds a run's workspace with a current copy reads the run,
 * its holder and its manifest head in one statement, takes no lock, and a command or
 * action that changed no file writes no workspace or manifest row.
 */

/** Every statement `db` runs while `recording` is set, whitespace folded. */
function recordingDb(db: Db): { db: Db; record<T>(fn: () => Promise<T>): Promise<string[]> } {
  let log: string[] | null = null;
  const note = (sql: string) => log?.push(sql.replace(/\s+/g, ' ').trim().toLowerCase());
  const wrap = (q: Queryable): Queryable => ({
    query: (text, params) => {
      note(text);
      return q.query(text, params);
    },
    execute: (text, params) => {
      note(text);
      return q.execute(text, params);
    },
    script: (text) => q.script(text),
  });
  return {
    db: {
      kind: db.kind,
      ...wrap(db),
      transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
      close: () => db.close(),
    },
    async record(fn) {
      log = [];
      try {
        await fn();
        return log;
      } finally {
        log = null;
      }
    },
  };
}

/** Statements that write workspace rows or the manifest, or take a workspace lock. */
function workspaceWrites(statements: readonly string[]): string[] {
  return statements.filter(
    (s) =>
      /^(insert into|update|delete from) (workbench_workspace|workspace_manifest|workspace_file)\b/.test(
        s,
      ) || s.includes('pg_advisory'),
  );
}

/** Reads of the manifest head on its own, and of the manifest's files. */
function headReads(statements: readonly string[]): string[] {
  return statements.filter(
    (s) =>
      s.startsWith('select wh.*') ||
      s === 'select version, updated_by_node from workspace_manifest where run_id = $1' ||
      /^select .* from workspace_file where run_id = \$1 order by path$/.test(s),
  );
}

t.test("a fresh run's first command reads no manifest", async (t) => {
  let recording: ReturnType<typeof recordingDb> | undefined;
  const { call } = await bwrapHost(t, {
    nodeId: 'node-f',
    runId: 'run-f',
    wrapDb: (real) => {
      recording = recordingDb(real);
      return recording.db;
    },
  });
  const statements = await recording!.record(async () => {
    const r = await call('exec', { command: 'echo one > a.txt' });
    t.match(r, { ok: true, payload: { exitCode: 0 } });
  });
  // Version 0 holds no file, and the command's claim carried the head.
  t.same(headReads(statements), [], 'no head or manifest read');
  t.ok(
    statements.some((s) => s.startsWith('update workspace_manifest')),
    'its file is committed',
  );
  const again = await recording!.record(async () => {
    const r = await call('exec', { command: 'cat a.txt' });
    t.match(r, { ok: true, payload: { exitCode: 0, stdout: 'one\n' } });
  });
  t.same(headReads(again), [], 'nor does the next one, whose copy is current');
});

t.test('an unchanged workspace costs one read and no write', async (t) => {
  let recording: ReturnType<typeof recordingDb> | undefined;
  const { db, call: dispatch } = await bwrapHost(t, {
    nodeId: 'node-u',
    runId: 'run-u',
    quota: { maxBytes: 1 << 30, maxFiles: 10_000 },
    wrapDb: (real) => {
      recording = recordingDb(real);
      return recording.db;
    },
  });
  // The queue's worker polls for commands on its own timer: its claim is no statement
  // of the call's, whatever moment it lands in.
  const record = async (fn: () => Promise<unknown>) =>
    (await recording!.record(fn)).filter((s) => !s.startsWith('with picked as materialized'));
  const call = async (action: string, args: Record<string, unknown>) => {
    const r = await dispatch(action, args);
    if (!r.ok) throw new Error(`${action}: ${r.errorCode}: ${r.message}`);
    return r;
  };
  const version = async () => (await getManifestHead(db, 'run-u')).version;

  // The first call provisions the workspace; from then on this node holds it.
  await call('fs_write', { path: 'a.txt', content: 'one' });
  const held = await version();

  t.test('a read reads one statement and writes nothing', async (t) => {
    const statements = await record(() => call('fs_read', { path: 'a.txt' }));
    t.equal(statements.length, 1, `one statement: ${statements.join(' | ')}`);
    t.match(statements[0], /^select .* from run r /, 'the run, its holder and its head');
    t.equal(await version(), held, 'the manifest did not move');
  });

  t.test('a command that changes nothing writes no workspace row', async (t) => {
    const statements = await record(() => call('exec', { command: 'cat a.txt' }));
    t.same(workspaceWrites(statements), [], 'no workspace or manifest write, no lock');
    t.equal(statements.filter((s) => s.includes(' from run r ')).length, 1, 'the run is read once');
    t.same(headReads(statements), [], 'the head came with the claim: no read of its own');
    t.equal(await version(), held, 'the manifest did not move');
  });

  t.test('a command that changes a file commits it, once', async (t) => {
    const statements = await record(() => call('exec', { command: 'echo two > b.txt' }));
    t.ok(
      workspaceWrites(statements).some((s) => s.startsWith('update workspace_manifest')),
      'the manifest head moves',
    );
    t.equal(await version(), held + 1);
    const again = await record(() => call('exec', { command: 'cat b.txt' }));
    t.same(workspaceWrites(again), [], 'and the next command that changes nothing writes nothing');
    t.equal(await version(), held + 1);
  });
});
