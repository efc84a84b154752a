import t from 'tap';
import { parseCommandListQuery } from '../../src/api/command-list.js';
import { ApiError } from '../../src/api/http-errors.js';
import { WorkbenchClient } from '../../src/client/index.js';
import { deleteExpiredCommands } from '../../src/store/index.js';
import { envelope, startApiHarness } from './api-support.js';

/**
 * `GET /v1/runs/:runId/commands`: a run's commands newest first, owner-scoped, with a
 * status filter and paging that neither skips nor repeats commands queued in the same
 * instant. Commands run for real through the bwrap sandbox; the paging fixtures are
 * rows written straight into the queue table, already terminal, so no worker takes them.
 */

const h = await startApiHarness(t);

interface Item {
  id: string;
  runId: string;
  callId: string | null;
  status: string;
  exitCode: number | null;
  durationMs: number | null;
  timeoutMs: number;
  attempts: number;
  queuedAt: string;
  [key: string]: unknown;
}
interface Page {
  commands: Item[];
  nextBefore: string | null;
}
interface Refusal {
  errorCode: string;
  message: string;
}

async function newRun(token: string): Promise<string> {
  const res = await h.json<{ run: { id: string } }>(token, 'POST', '/v1/runs', {});
  if (res.status !== 201) throw new Error(`create run: ${res.status}`);
  return res.body.run.id;
}

async function exec(runId: string, command: string, callId?: string) {
  const res = await h.json<{ ok: boolean; payload: { commandId: string } }>(
    h.alice,
    'POST',
    '/v1/dispatch',
    { ...envelope(runId, 'exec', { command }), ...(callId ? { callId } : {}) },
  );
  if (!res.body.ok) throw new Error(`exec refused: ${JSON.stringify(res.body)}`);
  return res.body.payload.commandId;
}

const list = (token: string, runId: string, query = '') =>
  h.json<Page & Refusal>(token, 'GET', `/v1/runs/${encodeURIComponent(runId)}/commands${query}`);

const STATUSES = ['completed', 'failed', 'timed_out', 'cancelled'] as const;

/**
 * Writes `count` finished commands for `runId`: command i is queued at `base + (i % 7)`
 * seconds, so every second holds several commands whose ids do not follow their
 * insertion order, and its status cycles through the terminal ones.
 */
async function seed(runId: string, count: number, prefix: string) {
  await h.db.execute(
    `insert into workspace_command (id, run_id, owner_user_id, status, request, timeout_ms,
       attempts, exit_code, queued_at, started_at, finished_at)
     select $2::text || '-' || md5(i::text), $1, 'alice',
       (array['completed', 'failed', 'timed_out', 'cancelled'])[1 + i % 4], '{}'::jsonb, 1000, 1,
       case when i % 4 = 0 then 0 else null end,
       $3::timestamptz + (i % 7) * interval '1 second',
       $3::timestamptz + (i % 7) * interval '1 second',
       $3::timestamptz + (i % 7) * interval '1 second' + interval '5 milliseconds'
     from generate_series(0, $4::int - 1) i`,
    [runId, prefix, '2030-01-01T00:00:00.000Z', count],
  );
  const rows = await h.db.query<{ id: string; status: string; queued_at: Date }>(
    `select id, status, queued_at from workspace_command where run_id = $1
     order by queued_at desc, id desc`,
    [runId],
  );
  return rows;
}

/** Every page of `runId` at `limit`, following `nextBefore`. */
async function allPages(runId: string, limit: number, status?: string) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let before: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (status) query.set('status', status);
    if (before) query.set('before', before);
    const page = await list(h.alice, runId, `?${query}`);
    if (page.status !== 200) throw new Error(`page: ${JSON.stringify(page.body)}`);
    ids.push(...page.body.commands.map((c) => c.id));
    sizes.push(page.body.commands.length);
    before = page.body.nextBefore;
    if (before === null) return { ids, sizes };
  }
  throw new Error('paging did not end');
}

t.test('a run lists its commands newest first, without their output', async (t) => {
  const runId = await newRun(h.alice);
  const first = await exec(runId, 'echo one', 'call-one');
  const second = await exec(runId, 'echo two >&2; exit 3');

  const res = await list(h.alice, runId);
  t.equal(res.status, 200);
  t.equal(res.body.nextBefore, null, 'one page holds them');
  t.same(
    res.body.commands.map((c) => c.id),
    [second, first],
    'newest first',
  );
  const [latest, earliest] = res.body.commands;
  t.match(latest, {
    id: second,
    runId,
    callId: null,
    status: 'completed',
    exitCode: 3,
    signal: null,
    timedOut: false,
    cancelled: false,
    errorCode: null,
    errorCategory: null,
    timeoutMs: 30_000,
    attempts: 1,
  });
  t.match(earliest, { id: first, callId: 'call-one', exitCode: 0 });
  for (const item of res.body.commands) {
    t.notOk('stdout' in item || 'stderr' in item, 'no output bodies in a list');
    t.type(item.durationMs, 'number');
    t.ok(Date.parse(item.queuedAt) <= Date.parse(String(item.finishedAt)), 'times are ISO');
  }
  const whole = await h.json<{ command: Record<string, unknown> }>(
    h.alice,
    'GET',
    `/v1/commands/${first}`,
  );
  t.match(whole.body.command, { ...earliest, stdout: 'one\n', stderr: '' }, 'one reads whole');

  const client = new WorkbenchClient({ baseUrl: h.url, token: h.alice });
  const viaClient = await client.listCommands(runId, { limit: 1 });
  t.same(
    viaClient.commands.map((c) => c.id),
    [second],
  );
  t.equal(viaClient.nextBefore, second);
  const rest = await client.listCommands(runId, { before: second });
  t.same(
    rest.commands.map((c) => c.callId),
    ['call-one'],
    'the client pages on',
  );
  t.equal(rest.nextBefore, null);
});

t.test(
  'a command retention removed answers command_expired, by id and by its callId',
  async (t) => {
    const runId = await newRun(h.alice);
    const id = await exec(runId, 'echo kept', 'call-expired');
    await h.db.execute(
      `update workspace_command set finished_at = finished_at - interval '40 days' where id = $1`,
      [id],
    );
    t.equal(await deleteExpiredCommands(h.db, 30 * 86_400_000, 100), 1);
    const read = await h.json<Refusal>(h.alice, 'GET', `/v1/commands/${id}`);
    t.equal(read.status, 410);
    t.equal(read.body.errorCode, 'command_expired');
    t.match(read.body.message, 'MEMQL_COMMAND_KEEP_MS');
    const cancel = await h.json<Refusal>(h.alice, 'POST', `/v1/commands/${id}/cancel`);
    t.equal(cancel.body.errorCode, 'command_expired');
    const byCall = await h.json<Refusal>(h.alice, 'GET', `/v1/runs/${runId}/calls/call-expired`);
    t.equal(byCall.status, 410, 'read by its callId too');
    t.equal(byCall.body.errorCode, 'command_expired');
    const cancelByCall = await h.json<Refusal>(
      h.alice,
      'POST',
      `/v1/runs/${runId}/calls/call-expired/cancel`,
    );
    t.equal(cancelByCall.body.errorCode, 'command_expired', 'and cancelled by its callId');
    const bobs = await h.json<Refusal>(h.bob, 'GET', `/v1/commands/${id}`);
    t.equal(bobs.body.errorCode, 'not_found', "another user's removed command is absent");
    const never = await h.json<Refusal>(h.alice, 'GET', '/v1/commands/no-such-command');
    t.equal(never.body.errorCode, 'not_found');
    const again = await h.json<{ ok: boolean; errorCode: string }>(
      h.alice,
      'POST',
      '/v1/dispatch',
      {
        ...envelope(runId, 'exec', { command: 'echo kept' }),
        callId: 'call-expired',
      },
    );
    t.same(
      { ok: again.body.ok, errorCode: again.body.errorCode },
      { ok: false, errorCode: 'command_expired' },
      'a repeat of its callId is refused, not run again',
    );
    const rows = await h.db.query('select id from workspace_command where run_id = $1', [runId]);
    t.same(rows, [], 'nothing was queued');
  },
);

t.test("another user's run reads as absent; an empty run lists nothing", async (t) => {
  const runId = await newRun(h.alice);
  await exec(runId, 'true');
  const bobs = await list(h.bob, runId);
  t.equal(bobs.status, 404);
  t.equal(bobs.body.errorCode, 'not_found');
  const absent = await list(h.bob, 'run-never-made');
  t.equal(absent.status, 404);
  t.equal(
    absent.body.message.replace('run-never-made', runId),
    bobs.body.message,
    'absent and not-yours read the same',
  );
  const filtered = await list(h.bob, runId, '?status=completed&limit=5');
  t.equal(filtered.status, 404, 'the query changes nothing about ownership');

  const bobRun = await newRun(h.bob);
  const empty = await list(h.bob, bobRun);
  t.same(empty.body, { commands: [], nextBefore: null });
});

t.test('paging walks every command once, through ties in queued_at', async (t) => {
  const runId = await newRun(h.alice);
  const rows = await seed(runId, 55, 'page');
  const expected = rows.map((r) => r.id);
  t.equal(new Set(rows.map((r) => r.queued_at.getTime())).size, 7, 'seven instants, many ties');

  const first = await list(h.alice, runId);
  t.equal(first.body.commands.length, 50, 'fifty by default');
  t.same(
    first.body.commands.map((c) => c.id),
    expected.slice(0, 50),
  );
  t.equal(first.body.nextBefore, expected[49]);

  for (const limit of [1, 7, 11, 54, 55, 500]) {
    const { ids, sizes } = await allPages(runId, limit);
    t.same(ids, expected, `limit ${limit}: every command once, in order`);
    t.equal(sizes.length, Math.max(1, Math.ceil(55 / limit)), `limit ${limit}: no empty tail`);
  }

  const last = await list(h.alice, runId, `?before=${expected[54]}`);
  t.same(last.body, { commands: [], nextBefore: null }, 'before the oldest: nothing');
});

t.test('the status filter pages within one status', async (t) => {
  const runId = await newRun(h.alice);
  const rows = await seed(runId, 30, 'filter');
  for (const status of STATUSES) {
    const expected = rows.filter((r) => r.status === status).map((r) => r.id);
    const { ids } = await allPages(runId, 3, status);
    t.same(ids, expected, status);
  }
  const failed = await list(h.alice, runId, '?status=failed&limit=500');
  t.ok(
    failed.body.commands.every((c) => c.status === 'failed' && c.exitCode === null),
    'only failed ones',
  );
  t.same((await list(h.alice, runId, '?status=queued')).body.commands, [], 'none queued');
  t.same((await list(h.alice, runId, '?status=running')).body.commands, [], 'none running');
});

t.test('bad queries are invalid_arguments naming the field', async (t) => {
  const runId = await newRun(h.alice);
  const other = await newRun(h.alice);
  const otherCommand = await exec(other, 'true');
  const cases: [string, string][] = [
    ['?status=done', 'status'],
    ['?status=', 'status'],
    ['?status=failed&status=completed', 'status'],
    ['?limit=0', 'limit'],
    ['?limit=501', 'limit'],
    ['?limit=-1', 'limit'],
    ['?limit=1.5', 'limit'],
    ['?limit=ten', 'limit'],
    ['?limit=', 'limit'],
    ['?limit=00010', 'limit'],
    ['?before=', 'before'],
    [`?before=${'x'.repeat(300)}`, 'before'],
    ['?before=no-such-command', 'before'],
    [`?before=${otherCommand}`, 'before'],
  ];
  for (const [query, field] of cases) {
    const res = await list(h.alice, runId, query);
    t.equal(res.status, 400, query);
    t.equal(res.body.errorCode, 'invalid_arguments', query);
    t.match(res.body.message, new RegExp(`^invalid_arguments: ${field}: `), query);
  }
  const wrongMethod = await h.json<Refusal>(h.alice, 'POST', `/v1/runs/${runId}/commands`, {});
  t.equal(wrongMethod.status, 405);
  const noToken = await h.json<Refusal>(null, 'GET', `/v1/runs/${runId}/commands`);
  t.equal(noToken.status, 401);
});

t.test('the query parser, without a server', async (t) => {
  const parse = (q: string) => parseCommandListQuery(new URLSearchParams(q));
  t.same(parse(''), { limit: 50 });
  t.same(parse('status=timed_out&limit=500&before=c-1'), {
    status: 'timed_out',
    limit: 500,
    before: 'c-1',
  });
  t.same(parse('limit=1&other=ignored'), { limit: 1 });
  t.throws(() => parse('status=TIMED_OUT'), ApiError);
  try {
    parse('status=nope');
  } catch (err) {
    t.equal(
      (err as Error).message,
      'invalid_arguments: status: expected one of queued, running, completed, failed, timed_out, cancelled',
    );
  }
});
