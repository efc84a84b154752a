import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import t, { type Test } from 'tap';
import {
  createRun,
  getConsentRequest,
  insertWorkerInvocation,
  openDb,
  provisionWorkspace,
  raiseConsentRequest,
  readConsentState,
  recordWorkerConnected,
} from '../../src/store/index.js';
import { eventually } from '../support/mesh.js';
import { NodeProcess, nodeMain } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The operator console in real headless Chromium (Debian's, installed by
 * scripts/setup/install-browser.sh) against a live local node, `node dist/nodes/local/main.js`,
 * started the way `npm start` starts it, in a temporary working directory. The node
 * is pointed at the test Postgres so the test can write the rows of a lost replica
 * through the store: PGlite can only be opened by the node's own process.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const cwd = await mkdtemp(join(tmpdir(), 'memql-console-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));

const child = spawn(process.execPath, ['--enable-source-maps', nodeMain('local')], {
  cwd,
  env: {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_DATABASE_URL: database.url,
    MEMQL_NODE_ID: 'local-1',
    MEMQL_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const node = new NodeProcess('local node', child);
t.teardown(async () => {
  if (!node.alive) return;
  const { code } = await node.stop('SIGINT');
  if (code !== 0) throw new Error(`the local node exited with ${code}: ${node.stderr.slice(-500)}`);
});

const deadline = Date.now() + 60_000;
while (!node.other.includes('ready. Ctrl-C stops.')) {
  if (!node.alive || Date.now() > deadline) {
    throw new Error(`the local node did not get ready: ${node.stderr.slice(-2000)}`);
  }
  await new Promise((r) => setTimeout(r, 50));
}
const banner = node.other.join('\n');
const api = /API: +(http:\/\/127\.0\.0\.1:\d+\/v1)$/m.exec(banner)?.[1];
const consoleUrl = /console: +(http:\/\/127\.0\.0\.1:\d+\/console)$/m.exec(banner)?.[1];
const token = /token: +(\S+)$/m.exec(banner)?.[1];
// The sign-in link npm start prints: the console, with the person token in its fragment.
const signInLink = /sign in: +(http:\/\/127\.0\.0\.1:\d+\/console#token=\S+)$/m.exec(banner)?.[1];
if (!api || !consoleUrl || !token || !signInLink)
  throw new Error(`the banner lacks an address or token:\n${banner}`);
// The operator credential npm start keeps in its data directory.
const operator = (await readFile(join(cwd, '.data', 'operator-token'), 'utf8')).trim();

/** An agent token the operator makes for `userId`: its id and secret. */
async function operatorMadeToken(t: Test, userId: string, label: string) {
  const res = await fetch(`${api}/admin/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId, label }),
  });
  t.equal(res.status, 201, `a token for ${userId}`);
  const body = (await res.json()) as { token: { id: string }; secret: string };
  return { id: body.token.id, secret: body.secret };
}

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).catch((err: Error) => {
    throw new Error(
      `${method} ${path} failed (${err.message}); node alive: ${node.alive}; stderr: ${node.stderr}; log: ${JSON.stringify(node.lines.slice(-5))}`,
    );
  });
  return (await res.json()) as { ok?: boolean; run?: { id: string } };
}
/** Writes a file in the run's workspace; no assertion here (the root test must not end early). */
async function write(runId: string): Promise<void> {
  const result = await call('POST', '/dispatch', {
    action: 'fs_write',
    args: { path: 'notes.txt', content: 'hi' },
    runId,
    agentId: 'agent-console',
    taskId: 'task-console',
  });
  if (result.ok !== true) throw new Error(`fs_write failed: ${JSON.stringify(result)}`);
}

// A live workspace on this node.
const live = (await call('POST', '/runs', {})).run!.id;
await write(live);
// A workspace whose replica was lost: its row named "replica-gone"; the next call
// lands on this node, which takes it over (released / node_lost, plus a successor).
const moved = (await call('POST', '/runs', {})).run!.id;
await provisionWorkspace(db, { runId: moved, nodeId: 'replica-gone', ownerUserId: 'dev' });
await write(moved);
// Somebody else's workspace, which the console must never show to "dev".
await createRun(db, { id: 'run-someone-else', ownerUserId: 'someone-else' });
await provisionWorkspace(db, {
  runId: 'run-someone-else',
  nodeId: 'local-1',
  ownerUserId: 'someone-else',
});

// The caller's worker host, a consent request of each tier, and one routing record;
// someone else's worker and request, which "dev" must never see. The local node serves
// no worker hosts, so its worker reads as not connected.
const worker = { os: 'darwin', provides: ['display', 'user_files'], version: '0.1.0' };
await recordWorkerConnected(db, {
  ...worker,
  ownerUserId: 'dev',
  workerId: 'dev-laptop',
  agentNodeId: 'agent-x',
});
await recordWorkerConnected(db, {
  ...worker,
  ownerUserId: 'someone-else',
  workerId: 'someone-elses-laptop',
  agentNodeId: 'agent-x',
});
const card = (owner: string, workerId: string, runId: string, scope: 'observe' | 'full') =>
  raiseConsentRequest(db, {
    ownerUserId: owner,
    workerId,
    runId,
    action: scope === 'full' ? 'exec' : 'fs_read',
    needs: scope === 'full' ? ['display'] : ['user_files'],
    requiredScope: scope,
    heldScope: 'none',
    summary: scope === 'full' ? 'exec needing display' : 'fs_read needing user_files',
  });
const toApprove = await card('dev', 'dev-laptop', live, 'full');
const toDeny = await card('dev', 'dev-laptop', moved, 'observe');
const foreign = await card('someone-else', 'someone-elses-laptop', 'run-someone-else', 'full');
const routed = await insertWorkerInvocation(db, {
  ownerUserId: 'dev',
  workerId: 'dev-laptop',
  runId: live,
  action: 'exec',
  callId: 'call-1',
  reroutedFrom: 'workbench',
  needs: ['display'],
  scope: 'full',
});

const profile = await mkdtemp(join(tmpdir(), 'memql-chromium-'));
t.teardown(() => rm(profile, { recursive: true, force: true }));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  viewport: { width: 1280, height: 800 },
});
t.teardown(() => browser.close());

t.test('Fleet > Workbenches shows the replica and the caller’s workspaces', async (t) => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  await page.goto(consoleUrl);
  await page.locator('#token').fill(token);
  await page.locator('#signin-form button[type=submit]').click();

  const replica = page.locator('#replicas tr[data-node-id="local-1"]');
  await replica.waitFor({ timeout: 15_000 });
  const cells = await replica.locator('td').allTextContents();
  t.equal(cells[0], 'local-1', 'node id');
  t.equal(cells[1], 'in-process');
  t.equal(cells[2], 'healthy', 'health');
  t.match(cells[3], /^\d+ running, \d+ queued, capacity 4$/, 'load');
  t.not(cells[5], 'not connected', `connected since ${cells[5]}`);
  // The sandbox sees this machine's /usr, which carries node, npm and git; the probe
  // ends shortly after the node starts, and a refresh shows it.
  const build = replica.locator('td.build');
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    if ((await build.textContent()) !== 'not reported yet') break;
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/v1/fleet/workbenches')),
      page.locator('#refresh').click(),
    ]);
  }
  t.equal(await build.textContent(), 'can build', 'the build column');
  t.match(await page.locator('#mode').textContent(), 'Local mode');

  const rows = page.locator('#workspaces tr[data-run-id]');
  await rows.first().waitFor();
  const shown = await rows.evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  t.same(
    shown.map((r) => [r[0], r[1], r[2], r[3]]).sort(),
    [
      [live, 'local-1', 'provisioned', ''],
      [moved, 'local-1', 'provisioned', ''],
    ].sort(),
    'only live workspaces, only the caller’s',
  );
  t.notMatch(await page.locator('body').textContent(), 'run-someone-else');

  await page.locator('#include-released').check();
  const lost = page.locator('#workspaces tr[data-status="released"]');
  await lost.waitFor({ timeout: 10_000 });
  const lostCells = await lost.locator('td').allTextContents();
  t.equal(lostCells[0], moved, 'the run whose replica was lost');
  t.equal(lostCells[1], 'replica-gone');
  t.equal(lostCells[2], 'released');
  t.equal(lostCells[3], 'replica lost; another replica took over', 'the reason in words');
  t.ok(lostCells[5], 'with its release time');
  t.equal(await page.locator('#workspaces tr[data-run-id]').count(), 3);
  t.notMatch(await page.locator('body').textContent(), 'run-someone-else', 'still caller-scoped');

  const shot = process.env.MEMQL_CONSOLE_SCREENSHOT ?? join(cwd, 'console.png');
  await page.screenshot({ path: shot, fullPage: true });
  t.comment(`screenshot: ${shot}`);

  await page.locator('#include-released').uncheck();
  await page
    .locator('#workspaces tr[data-status="released"]')
    .waitFor({ state: 'detached', timeout: 10_000 });
  t.pass('unchecking hides released workspaces again');

  await page.reload();
  await replica.waitFor({ timeout: 10_000 });
  t.pass('the token is kept in sessionStorage across a reload');
  t.same(errors, [], 'no script errors and no CSP violations');
  await page.close();
});

/** Takes a screenshot of the page as it stands, and checks it was written. */
async function shot(t: Test, page: Page, name: string): Promise<void> {
  const dir = process.env.MEMQL_CONSOLE_SCREENSHOTS ?? cwd;
  const path = join(dir, `console-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  t.ok((await stat(path)).size > 10_000, `screenshot ${path}`);
}

t.test('a run’s page: files, commands, processes, artifacts, history, end', async (t) => {
  // `live` has version 1 (notes.txt); a command adds two files and removes it.
  const ran = await call('POST', '/dispatch', {
    action: 'exec',
    args: { command: 'printf a > one.txt && printf bb > two.txt && rm notes.txt' },
    runId: live,
    agentId: 'agent-console',
    taskId: 'task-console',
  });
  t.equal(ran.ok, true, JSON.stringify(ran));
  const commandId = (ran as { payload?: { commandId?: string } }).payload?.commandId;
  await call('POST', `/runs/${live}/checkpoints`, { label: 'first-notes', version: 1 });
  const promoted = await call('POST', '/dispatch', {
    action: 'promote_artifact',
    args: { path: 'two.txt', name: 'two.txt' },
    runId: live,
    agentId: 'agent-console',
    taskId: 'task-console',
  });
  t.equal(promoted.ok, true, JSON.stringify(promoted));
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(signInLink);
  const row = page.locator(`#workspaces tr[data-run-id="${live}"]`);
  await row.waitFor({ timeout: 15_000 });
  await row.locator('a', { hasText: 'Open' }).click();
  await page.locator('#files tr[data-path="one.txt"]').waitFor({ timeout: 15_000 });
  t.equal(await page.locator('#run-title').textContent(), live);
  t.match(await page.locator('#run-status').textContent(), /^running/);
  t.same(
    await page
      .locator('#files tr[data-path]')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-path'))),
    ['one.txt', 'two.txt'],
    'its files',
  );
  const [fileDownload] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('#files tr[data-path="two.txt"] button').click(),
  ]);
  t.equal(await readFile((await fileDownload.path())!, 'utf8'), 'bb', 'a file downloads');
  // A command that waits (it holds the workspace: the page still loads), to be cancelled from the page (its call is left to run).
  const waiting = call('POST', '/dispatch', {
    action: 'exec',
    args: { command: 'sleep 600' },
    runId: live,
    agentId: 'agent-console',
    taskId: 'task-console',
    callId: 'console-sleeper',
  });
  await eventually('the sleeper running', async () => {
    const rows = await db.query<{ status: string }>(
      `select status from workspace_command where run_id = $1 and call_id = 'console-sleeper'`,
      [live],
    );
    return rows[0]?.status === 'running';
  });

  await page.reload();
  await page.locator('#commands tr[data-status="running"]').waitFor({ timeout: 15_000 });
  const done = page.locator(`#commands tr[data-command-id="${commandId}"]`);
  t.match(await done.locator('td').allTextContents(), [commandId, 'completed', '0']);
  const sleeper = page.locator('#commands tr[data-status="running"]');
  await sleeper.waitFor();
  await sleeper.locator('button', { hasText: 'Cancel' }).click();
  // The cancel ends it in the sandbox and records it; the page shows it when it reloads.
  const cancelled = page.locator('#commands tr[data-status="cancelled"]');
  while ((await cancelled.count()) === 0) {
    await Promise.all([
      page.waitForResponse((r) => r.url().includes('/commands?limit=')),
      page.locator('#refresh').click(),
    ]);
  }
  t.pass('a running command cancelled from its row');
  await waiting;
  await page
    .locator(`#commands tr[data-command-id="${commandId}"] button`, { hasText: 'Output' })
    .click();
  await page.locator('#command-output').waitFor();
  t.match(await page.locator('#command-output-title').textContent(), 'completed, exit code 0');
  const artifact = page.locator('#artifacts tr[data-artifact-id]');
  t.match(await artifact.locator('td').allTextContents(), ['two.txt', /^text\/plain/, '2']);
  const [artifactDownload] = await Promise.all([
    page.waitForEvent('download'),
    artifact.locator('button').click(),
  ]);
  t.equal(artifactDownload.suggestedFilename(), 'two.txt');
  t.equal(await readFile((await artifactDownload.path())!, 'utf8'), 'bb', 'an artifact downloads');

  const versions = page.locator('#versions tr[data-version]');
  await versions.first().waitFor({ timeout: 10_000 });
  const shown = await versions.evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  t.same(
    shown.map((r) => [r[0], r[2], r[3], r[4], r[5], r[6]]),
    [
      ['2', `command ${commandId}`, '2', '0', '1', ''],
      ['1', 'fs_write', '1', '0', '0', 'first-notes'],
    ],
    'its history: newest first, what made each, its counts and its label',
  );
  await page.locator('#versions tr[data-version="2"] button').click();
  const changes = page.locator('#changes tr[data-path]');
  await changes.first().waitFor({ timeout: 10_000 });
  t.same(
    await changes.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)),
    ),
    [
      ['removed', 'notes.txt', '2'],
      ['added', 'one.txt', '1'],
      ['added', 'two.txt', '2'],
    ],
  );
  t.match(await page.locator('#changes-title').textContent(), '2 added, 0 changed, 1 removed');
  await shot(t, page, 'run');

  const [ended] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/end')),
    page.locator('#run-actions button', { hasText: 'End as succeeded' }).click(),
  ]);
  t.equal(ended.status(), 200);
  await page.locator('#run-status[data-status="succeeded"]').waitFor({ timeout: 15_000 });
  t.pass('ended from its page');
  t.same(errors, [], 'no script errors and no CSP violations');
  await page.close();
});

t.test('a run deleted from its page is gone', async (t) => {
  const doomed = (await call('POST', '/runs', {})).run!.id;
  await write(doomed);
  const page = await browser.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(signInLink);
  await page.locator('#replicas tr').first().waitFor({ timeout: 15_000 });
  await page.evaluate(`location.hash = '#run=${encodeURIComponent(doomed)}'`);
  await page.locator('#files tr[data-path="notes.txt"]').waitFor({ timeout: 15_000 });
  await page.locator('#run-actions button', { hasText: 'Delete' }).click();
  await page.locator('#page-fleet').waitFor({ state: 'visible', timeout: 15_000 });
  const gone = await fetch(`${api}/runs/${doomed}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(gone.status, 404, 'the run is deleted');
  await page.close();
});

t.test('Audit and Tokens: searched, paged, a token revoked', async (t) => {
  const spareId = (await operatorMadeToken(t, 'dev', 'spare for the console')).id;
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(signInLink);
  await page.locator('#who[data-kind="person"]').waitFor({ timeout: 15_000 });
  await page.locator('nav a', { hasText: 'Audit' }).click();
  await page.locator('#audit tr[data-event-type]').first().waitFor({ timeout: 15_000 });
  await page.locator('#audit-run').fill(live);
  await page.locator('#audit-type').fill('workspace_command.');
  await page.locator('#audit-form button').click();
  // Refilled by the search: every row is then a command event.
  await page.waitForFunction(`(() => {
    const rows = [...document.querySelectorAll('#audit tr[data-event-type]')];
    return rows.length > 0 && rows.every((tr) => tr.dataset.eventType.startsWith('workspace_command.'));
  })()`);
  const types = await page
    .locator('#audit tr[data-event-type]')
    .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-event-type')));
  t.ok(types.includes('workspace_command.completed'), `its command events: ${types.join(', ')}`);
  t.notMatch(await page.locator('#audit').textContent(), 'someone-else', 'only the caller’s');
  await shot(t, page, 'audit');

  await page.locator('nav a', { hasText: 'Tokens' }).click();
  const spareRow = page.locator(`#tokens tr[data-token-id="${spareId}"]`);
  await spareRow.waitFor({ timeout: 15_000 });
  t.match(await spareRow.locator('td').allTextContents(), [
    spareId,
    'dev',
    'agent',
    'spare for the console',
  ]);
  await spareRow.locator('button', { hasText: 'Revoke' }).click();
  await spareRow.locator('td', { hasText: /^revoked/ }).waitFor({ timeout: 15_000 });
  t.pass('revoked with the person token');
  await shot(t, page, 'tokens');
  t.same(errors, [], 'no script errors and no CSP violations');
  await page.close();
});

t.test('the workspace list pages: 50 at a time, older and newer', async (t) => {
  // A user of their own with 55 workspaces, signed in with an agent token the operator made.
  for (let i = 0; i < 55; i++) {
    const runId = `run-pager-${String(i).padStart(2, '0')}`;
    await createRun(db, { id: runId, ownerUserId: 'pager' });
    await provisionWorkspace(db, { runId, nodeId: 'local-1', ownerUserId: 'pager' });
  }
  const pagerToken = (await operatorMadeToken(t, 'pager', 'paging')).secret;
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${consoleUrl}#token=${pagerToken}`);
  const rows = page.locator('#workspaces tr[data-run-id]');
  const runIds = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
  const count = (n: number) =>
    eventually(`${n} workspaces shown`, async () => (await rows.count()) === n);
  await count(50);
  const first = await runIds();
  t.equal(first[0], 'run-pager-54', 'newest first');
  t.ok(await page.locator('#workspaces-newer').isHidden(), 'no newer page on the first');
  await page.locator('#workspaces-older').click();
  await count(5);
  t.same(
    await runIds(),
    ['run-pager-04', 'run-pager-03', 'run-pager-02', 'run-pager-01', 'run-pager-00'],
    'the older page holds the rest',
  );
  t.ok(await page.locator('#workspaces-older').isHidden(), 'no older page after the last');
  await shot(t, page, 'workspaces-older');
  await page.locator('#workspaces-newer').click();
  await count(50);
  t.same(await runIds(), first, 'back to the first page');
  t.same(errors, [], 'no script errors and no CSP violations');
  await page.close();
});

t.test('the operator credential: replicas, everyone’s audit trail and tokens', async (t) => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(consoleUrl);
  await page.locator('#token').fill(operator);
  await page.locator('#signin-form button[type=submit]').click();
  await page.locator('#who[data-kind="operator"]').waitFor({ timeout: 15_000 });
  await page.locator('#replicas tr[data-node-id="local-1"]').waitFor({ timeout: 15_000 });
  t.ok(await page.locator('#workspaces').isHidden(), 'no user’s workspaces');
  await shot(t, page, 'operator-fleet');
  await page.locator('nav a', { hasText: 'Audit' }).click();
  await page.locator('#audit-user').waitFor({ state: 'visible' });
  await page.locator('#audit tr[data-event-type]').first().waitFor({ timeout: 15_000 });
  const owners = await page.locator('#audit tr[data-event-type] td:nth-child(3)').allTextContents();
  t.ok(owners.includes('dev'), 'dev’s events');
  await page.locator('nav a', { hasText: 'Tokens' }).click();
  const tokenUsers = () =>
    page.locator('#tokens tr[data-token-id] td:nth-child(2)').allTextContents();
  // Unsearched, every user's tokens: dev's and the paging test's user's.
  await eventually('everyone’s tokens listed', async () => {
    const users = await tokenUsers();
    return users.includes('dev') && users.includes('pager');
  });
  t.pass('every user’s tokens, unsearched');
  await page.locator('#tokens-user').fill('dev');
  await page.locator('#tokens-form button').click();
  await eventually('only dev’s tokens listed', async () => {
    const users = await tokenUsers();
    return users.length > 0 && users.every((u) => u === 'dev');
  });
  t.pass('one user’s tokens, searched');
  await shot(t, page, 'operator-tokens');
  t.same(errors, [], 'no script errors and no CSP violations');
  await page.close();
});

t.test('Workers: approve and deny requests, flip the kill switch, read the routing', async (t) => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  // The person signs in with the link npm start printed.
  await page.goto(signInLink);
  await page.locator('#who[data-kind="person"]').waitFor({ timeout: 15_000 });
  t.match(await page.locator('#who').textContent(), 'Signed in as dev with your person token');
  t.equal(page.url(), consoleUrl, 'the token is taken out of the address bar');

  const laptop = page.locator('#workers tr[data-worker-id="dev-laptop"]');
  await laptop.waitFor({ timeout: 15_000 });
  t.same(await laptop.locator('td').allTextContents(), [
    'dev-laptop',
    'not connected',
    'darwin',
    'display, user_files',
    'none',
    'off',
  ]);
  t.equal(await page.locator('#workers tr[data-worker-id]').count(), 1, 'only the caller’s');
  const body = await page.locator('body').textContent();
  t.notMatch(body, 'someone-elses-laptop');
  t.notMatch(body, foreign.id);

  const record = page.locator(`#invocations tr[data-invocation-id="${routed.id}"]`);
  const recordCells = await record.locator('td').allTextContents();
  t.same(recordCells.slice(0, 7), [
    'workbench',
    'dev-laptop',
    'exec',
    'display',
    'full',
    'running',
    live,
  ]);

  const approveRow = page.locator(`#consent tr[data-request-id="${toApprove.id}"]`);
  t.equal(await approveRow.locator('button.approve').textContent(), 'Approve (full)');
  await approveRow.locator('button.approve').click();
  await approveRow.waitFor({ state: 'detached', timeout: 10_000 });
  await laptop.locator('td.scope', { hasText: 'full' }).waitFor({ timeout: 10_000 });
  t.equal(
    (await getConsentRequest(db, 'dev', toApprove.id))?.decidedScope,
    'full',
    'approved at the tier it needs',
  );
  t.equal((await readConsentState(db, 'dev')).workers.get('dev-laptop')?.scope, 'full');

  const denyRow = page.locator(`#consent tr[data-request-id="${toDeny.id}"]`);
  await denyRow.locator('button.deny').click();
  await denyRow.waitFor({ state: 'detached', timeout: 10_000 });
  t.equal((await getConsentRequest(db, 'dev', toDeny.id))?.status, 'denied');
  await page.locator('#consent td.empty').waitFor();
  t.equal(
    (await getConsentRequest(db, 'someone-else', foreign.id))?.status,
    'pending',
    'untouched',
  );

  await page.locator('#kill-switch').click();
  await page.locator('#kill-switch[data-engaged="true"]').waitFor({ timeout: 10_000 });
  t.equal((await readConsentState(db, 'dev')).allKilled, true, 'engaged for every worker');
  t.match(await page.locator('#kill-state').textContent(), 'Kill switch ON');
  t.equal((await readConsentState(db, 'someone-else')).allKilled, false, 'only the caller’s');
  await page.locator('#kill-switch').click();
  await page.locator('#kill-switch[data-engaged="false"]').waitFor({ timeout: 10_000 });
  t.equal((await readConsentState(db, 'dev')).allKilled, false, 'released');
  t.same(errors, [], 'no script errors and no CSP violations');
  await page.close();
});

t.test('signed in with the agent token, the decisions show the refusal', async (t) => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  const pending = await card('dev', 'dev-laptop', live, 'full');
  await page.goto(consoleUrl);
  await page.locator('#token').fill(token);
  await page.locator('#signin-form button[type=submit]').click();
  await page.locator('#who[data-kind="agent"]').waitFor({ timeout: 15_000 });
  t.match(await page.locator('#who').textContent(), 'with an agent token');

  const row = page.locator(`#consent tr[data-request-id="${pending.id}"]`);
  await row.locator('button.approve').click();
  const refusal = page.locator('#worker-refusal');
  await refusal.filter({ hasText: 'person_required' }).waitFor({ timeout: 10_000 });
  t.match(await refusal.textContent(), /signed in to the console/);
  t.notMatch(await refusal.textContent(), /memql |\/v1\//, 'names no command or route');
  t.equal((await getConsentRequest(db, 'dev', pending.id))?.status, 'pending', 'not approved');
  await row.waitFor({ timeout: 10_000 });
  t.pass('the request is still listed, pending');

  await page.locator('#kill-switch').click();
  await page.locator('#kill-switch[data-engaged="true"]').waitFor({ timeout: 10_000 });
  t.equal((await readConsentState(db, 'dev')).allKilled, true, 'an agent token turns it on');
  await page.locator('#kill-switch').click();
  await refusal.filter({ hasText: 'turning the kill switch off' }).waitFor({ timeout: 10_000 });
  t.equal((await readConsentState(db, 'dev')).allKilled, true, 'but not off');
  t.same(errors, [], 'no script errors');
  await page.close();
});

t.test('a wrong token is refused and the page asks again', async (t) => {
  const page = await browser.newPage();
  await page.goto(consoleUrl);
  await page.locator('#token').fill('mqt_not-a-real-token');
  await page.locator('#signin-form button[type=submit]').click();
  await page.locator('#signin-message').filter({ hasText: 'not accepted' }).waitFor();
  t.equal(await page.locator('#replicas tr').count(), 0, 'nothing is shown');
  t.equal(
    await page.evaluate("sessionStorage.getItem('memql.console.token')"),
    null,
    'the rejected token is not kept',
  );
  await page.close();
});
