import { PassThrough, Writable } from 'node:stream';
import t from 'tap';
import { parseCli } from '../../nodes/cli/cli-args.js';
import { runCli } from '../../nodes/cli/cli-commands.js';
import { WorkbenchClient } from '../../src/client/index.js';
import {
  getConsentRequest,
  insertWorkerInvocation,
  raiseConsentRequest,
  readConsentState,
  recordWorkerConnected,
} from '../../src/store/index.js';
import { startApiHarness } from '../api/api-support.js';

/**
 * `memql workers` and `memql consent` run in-process against a live API (real
 * Postgres): what they print, their exit codes, and what they change in the store.
 * They run with alice's person token, as the user in their own shell would (what an
 * agent token gets is in `cli-person-required.test.ts`).
 */

const h = await startApiHarness(t);

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

async function memql(...argv: string[]) {
  const invocation = parseCli(argv, { MEMQL_URL: h.url, MEMQL_TOKEN: h.alicePerson });
  const client = new WorkbenchClient({ baseUrl: h.url, token: h.alicePerson });
  const stdout = new Sink();
  const stderr = new Sink();
  const code = await runCli(
    invocation,
    client,
    { stdout, stderr, stdin: new PassThrough() },
    new AbortController().signal,
  );
  return { code, stdout: stdout.text, stderr: stderr.text };
}

await recordWorkerConnected(h.db, {
  ownerUserId: 'alice',
  workerId: 'laptop',
  os: 'darwin',
  provides: ['display'],
  version: '0.1.0',
  agentNodeId: 'node-api',
});
const needsFull = await raiseConsentRequest(h.db, {
  ownerUserId: 'alice',
  workerId: 'laptop',
  runId: 'run-1',
  action: 'exec',
  needs: ['display'],
  requiredScope: 'full',
  heldScope: 'none',
  summary: 'exec needing display',
});

t.test('workers ls, consent ls and approve print tables and change the scope', async (t) => {
  const ls = await memql('workers', 'ls');
  t.equal(ls.code, 0, ls.stderr);
  t.match(ls.stdout, /^kill switch: off\nWORKER\s+CONNECTED/);
  t.match(ls.stdout, /laptop\s+no\s+darwin\s+display\s+none\s+off/);

  const pending = await memql('consent', 'ls');
  t.equal(pending.code, 0);
  t.match(
    pending.stdout,
    new RegExp(`${needsFull.id}\\s+laptop\\s+run-1\\s+exec\\s+display\\s+full`),
  );

  const lower = await memql('consent', 'approve', needsFull.id, '--scope', 'observe');
  t.equal(lower.code, 0, lower.stderr);
  t.match(lower.stdout, /^warning: approved at observe.*will still not run/);
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop')?.scope, 'observe');

  const again = await memql('consent', 'approve', needsFull.id);
  t.equal(again.code, 1, 'a decided request is an error');
  t.match(again.stderr, /^error: invalid_arguments: consent request .* was already approved/);
  t.equal((await getConsentRequest(h.db, 'alice', needsFull.id))?.decidedScope, 'observe');

  const json = await memql('consent', 'ls', '--status', 'approved', '--json');
  t.same(
    JSON.parse(json.stdout).requests.map((r: { id: string }) => r.id),
    [needsFull.id],
  );
});

t.test('workers scope, kill-switch and invocations', async (t) => {
  const scope = await memql('workers', 'scope', 'laptop', 'full');
  t.equal(scope.stdout, 'worker laptop: scope observe -> full\n');
  const kill = await memql('workers', 'kill-switch', 'on');
  t.match(kill.stdout, /^kill switch on for every worker/);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, true);
  t.match((await memql('workers', 'ls')).stdout, /^kill switch: ON for every worker/);
  await memql('workers', 'kill-switch', 'off');
  const one = await memql('workers', 'kill-switch', 'on', '--worker', 'laptop');
  t.equal(
    one.stdout,
    'kill switch on for worker laptop: no call runs there until it is turned off\n',
  );
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop')?.killSwitch, true);
  const missing = await memql('workers', 'kill-switch', 'on', '--worker', 'nope');
  t.equal(missing.code, 1);
  t.match(missing.stderr, /^error: not_found: worker "nope" has never connected for you/);

  await insertWorkerInvocation(h.db, {
    ownerUserId: 'alice',
    workerId: 'laptop',
    runId: 'run-1',
    action: 'exec',
    callId: null,
    reroutedFrom: 'workbench',
    needs: ['display'],
    scope: 'full',
  });
  const records = await memql('workers', 'invocations', '--run', 'run-1');
  t.match(records.stdout, /wiv_\S+\s+run-1\s+laptop\s+exec\s+workbench\s+display\s+full\s+running/);
  t.equal(
    (await memql('workers', 'invocations', '--run', 'run-2')).stdout,
    'no calls were sent to a worker\n',
  );
  const fleet = await memql('fleet');
  t.match(fleet.stdout, /your workers:\nWORKER[^\n]*\nlaptop/);
});

t.test('consent deny', async (t) => {
  const request = await raiseConsentRequest(h.db, {
    ownerUserId: 'alice',
    workerId: 'laptop',
    runId: 'run-3',
    action: 'fs_read',
    needs: ['user_files'],
    requiredScope: 'observe',
    heldScope: 'none',
    summary: 'fs_read needing user_files',
  });
  const deny = await memql('consent', 'deny', request.id);
  t.equal(deny.code, 0);
  t.match(deny.stdout, `denied ${request.id}`);
  t.equal((await getConsentRequest(h.db, 'alice', request.id))?.status, 'denied');
  t.equal((await memql('consent', 'ls')).stdout, 'no consent requests\n');
});
