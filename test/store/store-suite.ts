import type { Test } from 'tap';
import {
  CallIdConflict,
  type Command,
  claimCallKey,
  claimNextCommand,
  commitManifestChange,
  countLiveCommands,
  createRun,
  type Db,
  deleteRunCommands,
  endLostCommands,
  enqueueCommand,
  finishCommand,
  finishRun,
  getArtifactForOwner,
  getCallRecord,
  getCommand,
  getCommandByCallId,
  getLiveWorkspace,
  getManifest,
  getManifestHead,
  getRun,
  getRunForOwner,
  getRunWorkspace,
  heartbeatCommand,
  insertArtifact,
  insertAuditEvent,
  listArtifactsForOwner,
  listAuditEvents,
  listRunsAwaitingCleanup,
  listWorkspacesForOwner,
  markRunArtifactsDeleted,
  markRunDeleted,
  markRunWorkspacesDeleted,
  migrate,
  provisionWorkspace,
  type Queryable,
  readStaleCandidates,
  recordCallOutcome,
  registerWorker,
  releaseLiveWorkspace,
  releaseWorkspace,
  requestCommandCancel,
  setWorkerStatus,
  workspaceIdFor,
} from '../../src/store/index.js';

let seq = 0;
/** An id no other subtest of this process uses. */
export function uid(prefix: string): string {
  seq += 1;
  return `${prefix}-${process.pid}-${seq}`;
}

async function newRun(db: Db, owner = 'user-a') {
  return createRun(db, { id: uid('run'), ownerUserId: owner, conversationId: 'conv-1' });
}

/**
 * The store behaviour every driver must show. `db` is migrated and owned by the
 * caller; each subtest makes its own runs so subtests do not depend on each other.
 */
export function storeSuite(t: Test, db: Db): void {
  t.test('migrations are recorded and not applied twice', async (t) => {
    t.same(await migrate(db), [], 'a second migrate applies nothing');
    const rows = await db.query<{ version: number }>(
      'select version from memql_schema_migration order by version',
    );
    t.ok(rows.length >= 1);
    t.equal(rows[0]!.version, 1);
  });

  t.test("a transaction rolls back and passes its body's own error through", async (t) => {
    class Refusal extends Error {}
    const refusal = new Refusal('decided inside the transaction');
    const run = await newRun(db);
    const got = await db
      .transaction(async (tx) => {
        await tx.execute('update run set conversation_id = $2 where id = $1', [run.id, 'changed']);
        throw refusal;
      })
      .catch((err: unknown) => err);
    t.equal(got, refusal, 'the very error, not a wrapped one');
    t.equal((await getRun(db, run.id))?.conversationId, 'conv-1', 'and nothing was written');
    await t.rejects(
      db.transaction((tx) => tx.query('select * from no_such_table')),
      { name: 'StoreError' },
      "a statement's failure is still a StoreError",
    );
  });

  t.test('runs: create, owner scoping, terminal moves', async (t) => {
    const run = await newRun(db);
    t.equal(run.status, 'running');
    t.equal(run.conversationId, 'conv-1');
    await t.rejects(createRun(db, { id: run.id, ownerUserId: 'x' }), { code: 'conflict' });
    t.equal((await getRunForOwner(db, run.id, 'user-a'))?.id, run.id);
    t.equal(await getRunForOwner(db, run.id, 'user-b'), null, "another user's run is absent");

    const first = await finishRun(db, run.id, 'abandoned');
    t.equal(first.changed, true);
    t.equal(first.run.status, 'abandoned');
    t.ok(first.run.endedAt);
    const again = await finishRun(db, run.id, 'abandoned');
    t.equal(again.changed, false, 'the same terminal status again is a no-op');
    await t.rejects(finishRun(db, run.id, 'succeeded'), { code: 'conflict' });
    await t.rejects(finishRun(db, 'no-such-run', 'failed'), { code: 'not_found' });

    t.equal(await markRunDeleted(db, run.id), true);
    t.equal(await getRun(db, run.id), null, 'a deleted run no longer resolves');
  });

  t.test('workspaces: one live row per run, takeover, revival, owner scoping', async (t) => {
    const run = await newRun(db, 'owner-ws');
    t.equal(await getLiveWorkspace(db, run.id), null);
    const a = await provisionWorkspace(db, {
      runId: run.id,
      nodeId: 'node-a',
      ownerUserId: 'owner-ws',
    });
    t.equal(a.id, workspaceIdFor(run.id, 'node-a'));
    t.equal(a.status, 'provisioned');
    t.equal(a.nodeId, 'node-a');
    const adopted = await provisionWorkspace(db, {
      runId: run.id,
      nodeId: 'node-a',
      ownerUserId: 'owner-ws',
    });
    t.equal(adopted.id, a.id, 'provisioning its own live row again returns it');

    await t.rejects(
      provisionWorkspace(db, { runId: run.id, nodeId: 'node-b', ownerUserId: 'owner-ws' }),
      { code: 'conflict' },
      'a second live row for the run is refused',
    );

    const b = await db.transaction(async (tx) => {
      const prev = await releaseLiveWorkspace(tx, run.id, 'node_lost');
      t.equal(prev?.nodeId, 'node-a');
      return provisionWorkspace(tx, { runId: run.id, nodeId: 'node-b', ownerUserId: 'owner-ws' });
    });
    t.equal(b.nodeId, 'node-b');
    t.equal((await getLiveWorkspace(db, run.id))?.id, b.id);

    const live = await listWorkspacesForOwner(db, 'owner-ws');
    t.same(
      live.map((w) => w.nodeId),
      ['node-b'],
    );
    const all = await listWorkspacesForOwner(db, 'owner-ws', { includeReleased: true });
    const released = all.find((w) => w.nodeId === 'node-a');
    t.equal(released?.status, 'released');
    t.equal(released?.releasedReason, 'node_lost');
    t.same(await listWorkspacesForOwner(db, 'someone-else', { includeReleased: true }), []);

    t.equal(await releaseWorkspace(db, b.id, 'run_succeeded'), true);
    t.equal(await releaseWorkspace(db, b.id, 'run_succeeded'), false, 'release is idempotent');

    const revived = await provisionWorkspace(db, {
      runId: run.id,
      nodeId: 'node-a',
      ownerUserId: 'owner-ws',
    });
    t.equal(revived.id, a.id, 'a released row of the same node comes back');
    t.equal(revived.status, 'provisioned');
    t.equal(revived.releasedReason, null);

    await markRunDeleted(db, run.id);
    const pending = await listRunsAwaitingCleanup(db, new Date());
    t.ok(
      pending.some((r) => r.id === run.id),
      'a deleted run with workspaces awaits cleanup',
    );
    t.equal(await markRunWorkspacesDeleted(db, run.id), 2);
    const after = await listRunsAwaitingCleanup(db, new Date());
    t.notOk(after.some((r) => r.id === run.id));
  });

  t.test('run, live workspace and manifest head in one read', async (t) => {
    t.same(await getRunWorkspace(db, 'missing-run'), {
      run: null,
      live: null,
      head: { version: 0, updatedByNode: null },
    });
    const run = await newRun(db);
    const fresh = await getRunWorkspace(db, run.id);
    t.same(fresh.run, await getRun(db, run.id), 'the run as getRun reads it');
    t.equal(fresh.live, null, 'no workspace yet');
    t.same(fresh.head, { version: 0, updatedByNode: null }, 'no manifest yet');

    const ws = await provisionWorkspace(db, { runId: run.id, nodeId: 'n1', ownerUserId: 'user-a' });
    await commitManifestChange(db, {
      runId: run.id,
      nodeId: 'n1',
      upserts: [{ path: 'a', hash: 'h'.repeat(64), size: 1, mode: 0o644, mtimeMs: 1 }],
      deletes: [],
    });
    const held = await getRunWorkspace(db, run.id);
    t.same(
      held.live,
      await getLiveWorkspace(db, run.id),
      'the live row as getLiveWorkspace reads it',
    );
    t.equal(held.live?.id, ws.id);
    t.same(held.head, { version: 1, updatedByNode: 'n1' });

    await releaseLiveWorkspace(db, run.id, 'node_lost');
    t.equal((await getRunWorkspace(db, run.id)).live, null, 'a released row is not live');
    await markRunDeleted(db, run.id);
    t.equal((await getRunWorkspace(db, run.id)).run, null, 'a deleted run reads as absent');
  });

  t.test('workspaces need an existing run', async (t) => {
    await t.rejects(
      provisionWorkspace(db, { runId: 'missing-run', nodeId: 'n', ownerUserId: 'u' }),
      { code: 'not_found' },
    );
  });

  t.test('manifest: versions, batches, compare-and-set, atomic failure', async (t) => {
    const run = await newRun(db);
    t.same(await getManifestHead(db, run.id), { version: 0, updatedByNode: null });
    const files = Array.from({ length: 4500 }, (_, i) => ({
      path: `dir/file-${String(i).padStart(5, '0')}.txt`,
      hash: `h${i}`,
      size: i,
      mode: 0o644,
      mtimeMs: 1_700_000_000_000 + i,
    }));
    const v1 = await commitManifestChange(db, {
      runId: run.id,
      nodeId: 'node-a',
      upserts: files,
      deletes: [],
    });
    t.equal(v1, 1);
    const m1 = await getManifest(db, run.id);
    t.equal(m1.files.length, 4500, 'batches larger than one statement all land');
    t.equal(m1.updatedByNode, 'node-a');
    t.same(m1.files[4499], files[4499]);

    const v2 = await commitManifestChange(db, {
      runId: run.id,
      nodeId: 'node-b',
      upserts: [{ path: 'dir/file-00000.txt', hash: 'changed', size: 7, mode: 0o600, mtimeMs: 5 }],
      deletes: ['dir/file-00001.txt', 'not/there'],
      expectedVersion: 1,
    });
    t.equal(v2, 2);
    const m2 = await getManifest(db, run.id);
    t.equal(m2.files.length, 4499);
    t.same(m2.files[0], {
      path: 'dir/file-00000.txt',
      hash: 'changed',
      size: 7,
      mode: 0o600,
      mtimeMs: 5,
    });

    await t.rejects(
      commitManifestChange(db, {
        runId: run.id,
        nodeId: 'node-a',
        upserts: [],
        deletes: ['dir/file-00002.txt'],
        expectedVersion: 1,
      }),
      { code: 'conflict' },
    );
    await t.rejects(
      commitManifestChange(db, {
        runId: run.id,
        nodeId: 'node-a',
        upserts: [
          { path: 'ok.txt', hash: 'a', size: 1, mode: 0o644, mtimeMs: 1 },
          { path: 'bad.txt', hash: 'b', size: -1, mode: 0o644, mtimeMs: 1 },
        ],
        deletes: ['dir/file-00002.txt'],
      }),
      { code: 'internal' },
      'a check violation fails the commit',
    );
    const m3 = await getManifest(db, run.id);
    t.equal(m3.version, 2, 'a failed commit leaves the version');
    t.equal(m3.files.length, 4499, 'and every row as it was');
    t.notOk(m3.files.some((f) => f.path === 'ok.txt'));
  });

  t.test('call keys: one key a call, whatever the action; gone with the run', async (t) => {
    const run = await newRun(db);
    const key = { runId: run.id, callId: 'k-1', action: 'fs_write', digest: 'a'.repeat(64) };
    t.equal(await claimCallKey(db, { ...key, nodeId: 'n1' }), null, 'the first claim records it');
    const seen = await claimCallKey(db, { ...key, nodeId: 'n2' });
    t.match(seen, { action: 'fs_write', digest: key.digest, nodeId: 'n1', outcome: null });
    await recordCallOutcome(db, run.id, 'k-1', { ok: true, payload: { size: 1 } });
    t.same((await getCallRecord(db, run.id, 'k-1'))?.outcome, { ok: true, payload: { size: 1 } });
    const base = { runId: run.id, ownerUserId: 'user-a', timeoutMs: 1000 };
    const exec = { action: 'exec', digest: 'b'.repeat(64), nodeId: 'n1' };
    await t.rejects(
      enqueueCommand(db, { ...base, id: uid('cmd'), callId: 'k-1', call: exec, request: {} }),
      CallIdConflict,
      "a command with a file action's key",
    );
    const queued = await enqueueCommand(db, {
      ...base,
      id: uid('cmd'),
      callId: 'k-2',
      call: exec,
      request: { command: 'x' },
    });
    t.equal(queued.created, true);
    t.match(await getCallRecord(db, run.id, 'k-2'), { commandId: queued.command.id });
    const again = await enqueueCommand(db, {
      ...base,
      id: uid('cmd'),
      callId: 'k-2',
      call: exec,
      request: { command: 'x' },
    });
    t.equal(again.command.id, queued.command.id, 'the same digest is the same command');
    await t.rejects(
      enqueueCommand(db, {
        ...base,
        id: uid('cmd'),
        callId: 'k-2',
        call: { ...exec, digest: 'c'.repeat(64) },
        request: { command: 'y' },
      }),
      CallIdConflict,
    );
    t.equal((await getCommandByCallId(db, run.id, 'k-2'))?.id, queued.command.id);
    await deleteRunCommands(db, run.id);
    t.equal(await getCallRecord(db, run.id, 'k-1'), null, "a run's keys go with its commands");
  });

  t.test('commands: enqueue, callId replay, claim, lease, finish', async (t) => {
    const run = await newRun(db);
    const base = { runId: run.id, ownerUserId: 'user-a', timeoutMs: 1000 };
    const c1 = await enqueueCommand(db, {
      ...base,
      id: uid('cmd'),
      callId: 'call-1',
      request: { command: 'echo one' },
    });
    t.equal(c1.created, true);
    t.equal(c1.command.status, 'queued');
    const replay = await enqueueCommand(db, {
      ...base,
      id: uid('cmd'),
      callId: 'call-1',
      request: { command: 'echo other' },
    });
    t.equal(replay.created, false, 'the same callId does not queue a second command');
    t.equal(replay.command.id, c1.command.id);
    t.same(replay.command.request, { command: 'echo one' });

    const before = await countLiveCommands(db);
    t.ok(before.queued >= 1);

    const claimed = await claimNextCommand(db, 'worker-1', 60_000);
    t.ok(claimed, 'a queued command is claimed');
    t.equal(claimed!.status, 'running');
    t.equal(claimed!.leaseOwner, 'worker-1');
    t.equal(claimed!.attempts, 1);
    t.equal(await heartbeatCommand(db, claimed!.id, 'worker-1', 60_000), true);
    t.equal(await heartbeatCommand(db, claimed!.id, 'worker-2', 60_000), false);
    t.equal(
      await finishCommand(db, claimed!.id, 'worker-2', { status: 'completed', exitCode: 0 }),
      null,
      'another lease owner cannot finish it',
    );
    const done = await finishCommand(db, claimed!.id, 'worker-1', {
      status: 'completed',
      exitCode: 3,
      stdout: Buffer.from([0, 1, 2, 255]),
      stderr: Buffer.from('warn'),
      stdoutTruncated: true,
    });
    t.equal(done?.status, 'completed');
    t.equal(done?.exitCode, 3);
    t.same([...(done?.stdout ?? [])], [0, 1, 2, 255], 'output bytes round-trip');
    t.equal(done?.stderr?.toString(), 'warn');
    t.equal(done?.stdoutTruncated, true);
    t.equal(
      await finishCommand(db, claimed!.id, 'worker-1', { status: 'failed' }),
      null,
      'a finished command cannot be finished again',
    );
  });

  t.test('commands: concurrent claims take distinct rows', async (t) => {
    // Drain whatever other subtests left queued so this one counts only its own.
    while (await claimNextCommand(db, 'drain', 60_000)) {}
    const run = await newRun(db);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const { command } = await enqueueCommand(db, {
        id: uid('cmd'),
        runId: run.id,
        ownerUserId: 'user-a',
        timeoutMs: 1000,
        request: { n: i },
      });
      ids.push(command.id);
    }
    const claims = await Promise.all(
      Array.from({ length: 12 }, (_, i) => claimNextCommand(db, `w${i}`, 60_000)),
    );
    const got = claims.filter((c) => c !== null).map((c) => c!.id);
    t.equal(got.length, 8, 'every queued command is claimed once');
    t.equal(new Set(got).size, 8, 'no command is claimed twice');
    t.same([...got].sort(), [...ids].sort());
  });

  t.test("commands: a live holder's commands are its own; a gone holder's anyone's", async (t) => {
    while (await claimNextCommand(db, 'drain', 60_000)) {}
    const run = await newRun(db);
    const ws = await provisionWorkspace(db, {
      runId: run.id,
      nodeId: 'node-a',
      ownerUserId: 'user-a',
    });
    await registerWorker(db, { leaseOwner: 'node-a/w1', nodeId: 'node-a' });
    const queue = async () =>
      (
        await enqueueCommand(db, {
          id: uid('cmd'),
          runId: run.id,
          workspaceId: ws.id,
          ownerUserId: 'user-a',
          timeoutMs: 1000,
          request: {},
        })
      ).command;
    const onB = { nodeId: 'node-b', livenessMs: 60_000 };
    const first = await queue();
    t.equal(await claimNextCommand(db, 'b', 60_000, onB), null, 'node-a is live: not for node-b');
    await setWorkerStatus(db, 'node-a/w1', 'draining');
    t.equal(await claimNextCommand(db, 'b', 60_000, onB), null, 'nor while node-a drains');
    const own = await claimNextCommand(db, 'a', 60_000, { nodeId: 'node-a', livenessMs: 60_000 });
    t.equal(own?.id, first.id, "the workspace's own node takes it at once");

    const second = await queue();
    await setWorkerStatus(db, 'node-a/w1', 'stopped');
    t.equal(
      (await claimNextCommand(db, 'b', 60_000, onB))?.id,
      second.id,
      'node-a stopped: its workspace is up for a fenced takeover, so node-b claims',
    );

    const third = await queue();
    await registerWorker(db, { leaseOwner: 'node-a/w2', nodeId: 'node-a' });
    t.equal(await claimNextCommand(db, 'b', 60_000, onB), null, 'node-a is back');
    t.equal(
      (await claimNextCommand(db, 'b', 60_000, { nodeId: 'node-b', livenessMs: 0 }))?.id,
      third.id,
      'a heartbeat older than the liveness window counts as gone',
    );
  });

  t.test('commands: a worker that is gone loses its running commands', async (t) => {
    while (await claimNextCommand(db, 'drain', 60_000)) {}
    const run = await newRun(db);
    const enqueue = async () =>
      (
        await enqueueCommand(db, {
          id: uid('cmd'),
          runId: run.id,
          ownerUserId: 'user-a',
          timeoutMs: 1000,
          request: {},
        })
      ).command;
    await registerWorker(db, { leaseOwner: 'live-w', nodeId: 'node-l' });
    await registerWorker(db, { leaseOwner: 'dead-w', nodeId: 'node-d' });
    const a = await enqueue();
    t.equal((await claimNextCommand(db, 'live-w', 600_000))?.id, a.id);
    const b = await enqueue();
    t.equal((await claimNextCommand(db, 'dead-w', 600_000))?.id, b.id);
    // Earlier tests left commands running under owners with no worker row: look at
    // this run's only.
    const mine = <T extends { runId: string }>(rows: T[]) => rows.filter((c) => c.runId === run.id);
    const none = await recoverAllStale(db, new Date(), { livenessMs: 60_000 });
    t.same(mine(none), [], 'both workers live, both leases current');
    await setWorkerStatus(db, 'dead-w', 'stopped');
    const lost = mine(await recoverAllStale(db, new Date(), { livenessMs: 60_000 }));
    t.same(
      lost.map((c) => [c.id, c.status, c.errorCode, c.errorCategory]),
      [[b.id, 'failed', 'command_lost', 'recovered_stale']],
    );
    t.equal((await getCommand(db, a.id))?.status, 'running', "the live worker's command runs on");
  });

  t.test('commands: stale recovery is a compare-and-set', async (t) => {
    while (await claimNextCommand(db, 'drain', 60_000)) {}
    const run = await newRun(db);
    const { command } = await enqueueCommand(db, {
      id: uid('cmd'),
      runId: run.id,
      ownerUserId: 'user-a',
      timeoutMs: 1000,
      request: {},
    });
    const claimed = await claimNextCommand(db, 'worker-dead', 1);
    t.equal(claimed?.id, command.id);
    // A cutoff a second ahead is past the 1 ms lease, however long the claim took.
    const recovered = await recoverAllStale(db, new Date(Date.now() + 1000));
    const mine = recovered.find((c) => c.id === command.id);
    t.ok(mine, 'the expired lease is recovered');
    t.equal(mine?.status, 'failed');
    t.equal(mine?.errorCategory, 'recovered_stale');
    t.equal(mine?.attempts, 1, 'attempts count the one claim');
    t.equal(
      await finishCommand(db, command.id, 'worker-dead', { status: 'completed', exitCode: 0 }),
      null,
      'the late finisher does not overwrite the recovery',
    );
    t.equal((await getCommand(db, command.id))?.status, 'failed');
    t.equal(await claimNextCommand(db, 'worker-2', 1000), null, 'recovery never re-queues');
    const again = await recoverAllStale(db, new Date(Date.now() + 1000));
    t.notOk(
      again.some((c) => c.id === command.id),
      'recovered once',
    );
  });

  t.test('commands: cancel queued and running', async (t) => {
    while (await claimNextCommand(db, 'drain', 60_000)) {}
    const run = await newRun(db);
    const mk = () =>
      enqueueCommand(db, {
        id: uid('cmd'),
        runId: run.id,
        ownerUserId: 'user-a',
        timeoutMs: 1000,
        request: {},
      });
    const queued = (await mk()).command;
    const cancelled = await requestCommandCancel(db, queued.id);
    t.equal(cancelled?.status, 'cancelled');
    t.ok(cancelled?.finishedAt);
    const running = (await mk()).command;
    const claimed = await claimNextCommand(db, 'w', 60_000);
    t.equal(claimed?.id, running.id);
    const flagged = await requestCommandCancel(db, running.id);
    t.equal(flagged?.status, 'running', 'a running command is flagged, its worker ends it');
    t.equal(flagged?.cancelRequested, true);
    t.equal((await countLiveCommands(db)).cancelling, 1);
    t.equal(await requestCommandCancel(db, 'nope'), null);
  });

  t.test('audit events: scalar metadata, filters, order', async (t) => {
    const run = await newRun(db);
    const id1 = await insertAuditEvent(db, {
      eventType: 'workspace_command.queued',
      runId: run.id,
      commandId: 'c-1',
      metadata: { timeoutMs: 1000, attempts: 0, ok: true, errorCode: null },
    });
    await insertAuditEvent(db, {
      eventType: 'workspace_command.completed',
      runId: run.id,
      commandId: 'c-1',
    });
    await insertAuditEvent(db, { eventType: 'other', runId: 'elsewhere' });
    const events = await listAuditEvents(db, { runId: run.id });
    t.same(
      events.map((e) => e.eventType),
      ['workspace_command.queued', 'workspace_command.completed'],
    );
    t.same(events[0]!.metadata, { timeoutMs: 1000, attempts: 0, ok: true, errorCode: null });
    t.equal(events[0]!.id, id1);
    t.equal((await listAuditEvents(db, { runId: run.id, afterId: id1 })).length, 1);
  });

  t.test('artifacts: owner scoping and deletion', async (t) => {
    const run = await newRun(db, 'artist');
    const art = await insertArtifact(db, {
      id: uid('art'),
      runId: run.id,
      ownerUserId: 'artist',
      name: 'report.pdf',
      contentType: 'application/pdf',
      size: 10,
      hash: 'abc',
      objectKey: 'artifacts/x',
      sourcePath: 'out/report.pdf',
    });
    t.equal((await getArtifactForOwner(db, art.id, 'artist'))?.name, 'report.pdf');
    t.equal(await getArtifactForOwner(db, art.id, 'intruder'), null);
    t.equal((await listArtifactsForOwner(db, 'artist', { runId: run.id })).length, 1);
    t.same(await listArtifactsForOwner(db, 'intruder'), []);
    const gone = await markRunArtifactsDeleted(db, run.id);
    t.same(
      gone.map((a) => a.id),
      [art.id],
    );
    t.equal(await getArtifactForOwner(db, art.id, 'artist'), null);
  });
}

/**
 * Ends as lost every stale candidate: those whose lease expired before `now` and, with
 * `livenessMs`, those whose worker is stopped, missing or silent (the statements of a
 * recovery round, without the queue's rule).
 */
export async function recoverAllStale(
  db: Queryable,
  now: Date,
  opts: { livenessMs?: number } = {},
): Promise<Command[]> {
  const found = await readStaleCandidates(db, now, {
    livenessMs: opts.livenessMs ?? 1e12,
  });
  const stale =
    opts.livenessMs === undefined
      ? found.filter((c) => c.leaseOverdueMs > 0)
      : found.filter(
          (c) =>
            c.leaseOverdueMs > 0 ||
            c.worker === null ||
            c.worker.status === 'stopped' ||
            c.worker.heartbeatAgeMs > opts.livenessMs!,
        );
  return endLostCommands(db, stale);
}
