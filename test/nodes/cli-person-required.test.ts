import t from 'tap';
import {
  getConsentRequest,
  raiseConsentRequest,
  readConsentState,
  recordWorkerConnected,
} from '../../src/store/index.js';
import { startApiHarness } from '../api/api-support.js';
import { memqlAs } from '../support/local-node.js';

/**
 * `memql` as a real process, as a tool loop would run it (with an agent token in
 * MEMQL_TOKEN) and as the user would in their own shell (with their person token):
 * the agent's `consent approve`, `consent deny`, `workers scope` (raising) and
 * `workers kill-switch off` are refused with `person_required`, exit 1, and print no
 * command that would do it; `workers kill-switch on` works; the person's all work.
 */

const h = await startApiHarness(t);
const memql = (token: string, ...argv: string[]) => memqlAs(h.url, token, ...argv);

await recordWorkerConnected(h.db, {
  ownerUserId: 'alice',
  workerId: 'laptop',
  os: 'linux',
  provides: ['display'],
  version: '0.1.0',
  agentNodeId: 'node-api',
});
const request = await raiseConsentRequest(h.db, {
  ownerUserId: 'alice',
  workerId: 'laptop',
  runId: 'run-cli',
  action: 'exec',
  needs: ['display'],
  requiredScope: 'full',
  heldScope: 'none',
  summary: 'exec needing display',
});

t.test('with an agent token: the decisions are refused, the kill switch goes on', async (t) => {
  const listed = await memql(h.alice, 'consent', 'ls');
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, request.id, 'an agent token reads the requests');

  for (const argv of [
    ['consent', 'approve', request.id],
    ['consent', 'deny', request.id],
    ['workers', 'scope', 'laptop', 'full'],
  ]) {
    const run = await memql(h.alice, ...argv);
    t.equal(run.code, 1, argv.join(' '));
    t.match(run.stderr, /^error: person_required: /, 'the typed refusal');
    t.match(run.stderr, /console/, 'says where the user decides it');
    t.notMatch(run.stderr, /memql |\/v1\//, 'names no command or route to do it');
  }
  t.equal((await getConsentRequest(h.db, 'alice', request.id))?.status, 'pending');
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop'), undefined);

  const on = await memql(h.alice, 'workers', 'kill-switch', 'on');
  t.equal(on.code, 0, on.stderr);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, true);
  const off = await memql(h.alice, 'workers', 'kill-switch', 'off');
  t.equal(off.code, 1);
  t.match(off.stderr, /^error: person_required: turning the kill switch off/);
  t.notMatch(off.stderr, /memql |\/v1\//);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, true, 'still on');
});

t.test('with the person token: the user decides', async (t) => {
  const off = await memql(h.alicePerson, 'workers', 'kill-switch', 'off');
  t.equal(off.code, 0, off.stderr);
  t.equal((await readConsentState(h.db, 'alice')).allKilled, false);
  const approve = await memql(h.alicePerson, 'consent', 'approve', request.id);
  t.equal(approve.code, 0, approve.stderr);
  t.equal((await getConsentRequest(h.db, 'alice', request.id))?.status, 'approved');
  t.equal((await readConsentState(h.db, 'alice')).workers.get('laptop')?.scope, 'full');
});
