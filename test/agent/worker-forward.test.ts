import pino from 'pino';
import t from 'tap';
import { forwardedWorkerCalls } from '../../src/agent/worker-forward.js';
import type { RequestContext, ServedRequest } from '../../src/mesh/index.js';
import {
  PeerUnavailableError,
  type ResponseFrame,
  type WireAuthority,
} from '../../src/mesh/index.js';

/**
 * The holding replica's side of a forwarded worker call, against a hub played by the
 * test: what it takes (only a mesh-authenticated peer's `worker.forward` with a user
 * authority), that it passes the call down the worker's stream unchanged with no gate
 * of its own, and how a failed stream is said so the forwarding agent answers as for
 * its own. Pure: no I/O.
 */

const log = pino({ level: 'silent' });
const alice: WireAuthority = { class: 'user', subject: 'user:alice' };
const inner = Buffer.from(JSON.stringify({ action: 'fs_read', args: { path: 'a' } }));
const body = (workerId = 'desk') =>
  Buffer.from(JSON.stringify({ workerId, payload: inner.toString('base64') }));

function request(over: Partial<ServedRequest> = {}): ServedRequest {
  return {
    id: '1',
    method: 'worker.forward',
    authority: alice,
    payload: body(),
    authenticated: true,
    peerNodeId: 'agent-a',
    ...over,
  };
}
const ctx: RequestContext = { signal: new AbortController().signal, output: () => {} };

function hub(answer: (workerId: string) => Promise<ResponseFrame>) {
  const sent: { userId: string; workerId: string; method: string; payload: Buffer }[] = [];
  return {
    sent,
    send(userId: string, workerId: string, method: string, _a: WireAuthority, payload: Buffer) {
      sent.push({ userId, workerId, method, payload });
      return answer(workerId);
    },
  };
}
const ok = async (): Promise<ResponseFrame> => ({
  kind: 'response',
  id: 'w',
  ok: true,
  errorCode: '',
  message: '',
  payload: Buffer.from('{"content":"x"}'),
});

t.test('an authenticated peer’s call goes down the worker stream unchanged', async (t) => {
  const h = hub(ok);
  const answer = await forwardedWorkerCalls(h, 'agent-b', log)(request(), ctx);
  t.match(answer, { ok: true });
  t.equal(answer.payload?.toString(), '{"content":"x"}');
  t.equal(h.sent.length, 1);
  t.match(h.sent[0], { userId: 'alice', workerId: 'desk', method: 'worker.dispatch' });
  t.same(h.sent[0]?.payload, inner, 'the dispatch payload as the arriving agent wrote it');
});

t.test('refused: not mesh-authenticated, another method, no user authority', async (t) => {
  const h = hub(ok);
  const serve = forwardedWorkerCalls(h, 'agent-b', log);
  t.match(await serve(request({ authenticated: false }), ctx), {
    ok: false,
    errorCode: 'forbidden',
  });
  t.match(await serve(request({ method: 'worker.dispatch' }), ctx), {
    ok: false,
    errorCode: 'invalid_arguments',
  });
  t.match(await serve(request({ authority: { class: 'system', subject: 'operator' } }), ctx), {
    ok: false,
    errorCode: 'invalid_arguments',
  });
  t.match(await serve(request({ authority: null }), ctx), { errorCode: 'invalid_arguments' });
  t.match(await serve(request({ payload: Buffer.from('{') }), ctx), {
    errorCode: 'invalid_arguments',
  });
  t.equal(h.sent.length, 0, 'nothing reached a worker');
});

t.test('a failed worker stream is said as data: absent (not sent) or lost (sent)', async (t) => {
  const serve = (sent: boolean) =>
    forwardedWorkerCalls(
      hub(() => Promise.reject(new PeerUnavailableError('worker desk went away', sent))),
      'agent-b',
      log,
    )(request(), ctx);
  const absent = await serve(false);
  t.match(absent, { ok: false, errorCode: 'worker_unavailable' });
  t.same(JSON.parse(String(absent.payload)), { workerLink: 'absent' });
  const lost = await serve(true);
  t.match(lost, { ok: false, errorCode: 'unavailable' });
  t.same(JSON.parse(String(lost.payload)), { workerLink: 'lost' });
});
