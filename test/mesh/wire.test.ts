import { type ServiceDefinition, status } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import t from 'tap';
import {
  errorResult,
  okResult,
  systemAuthority,
  userAuthority,
  WorkbenchError,
} from '../../src/contract/index.js';
import {
  decodeFrame,
  encodeFrame,
  type Frame,
  tolerantDeserializer,
} from '../../src/mesh/frames.js';
import { checkMeshToken, meshTokenMetadata, tokensEqual } from '../../src/mesh/mesh-auth.js';
import {
  loadMeshProtos,
  NODE_SERVICE_NAME,
  PROTO_LOADER_OPTIONS,
  packageVersion,
  protoDir,
} from '../../src/mesh/proto.js';
import { authorityFromWire, authorityToWire } from '../../src/mesh/wire-authority.js';
import {
  answerFromError,
  answerFromResult,
  errorFromResponse,
  responseFrame,
  resultFromResponse,
  streamRefusal,
} from '../../src/mesh/wire-errors.js';
import { ObjectStoreUnavailableError } from '../../src/objects/index.js';

const method = loadMeshProtos().nodeService.Stream!;
const roundTrip = (f: Frame) =>
  decodeFrame(method.requestDeserialize(method.requestSerialize(encodeFrame(f))));

const frames: Frame[] = [
  { kind: 'hello', nodeId: 'wb-1', nodeType: 'workbench', version: '0.1.0' },
  {
    kind: 'hello',
    nodeId: 'laptop',
    nodeType: 'worker',
    version: '0.1.0',
    worker: { os: 'linux', provides: ['display', 'user_files'], capacity: 2 },
  },
  { kind: 'health', healthy: true, running: 2, queued: 1, capacity: 4 },
  {
    kind: 'health',
    healthy: true,
    running: 0,
    queued: 0,
    capacity: 2,
    toolchain: { status: 'probed', missing: [] },
  },
  {
    kind: 'health',
    healthy: true,
    running: 0,
    queued: 0,
    capacity: 2,
    toolchain: { status: 'probed', missing: ['npm', 'git'] },
  },
  {
    kind: 'health',
    healthy: false,
    running: 0,
    queued: 0,
    capacity: 1,
    toolchain: { status: 'probe_failed', reason: 'no_sandbox: bubblewrap is not usable' },
  },
  {
    kind: 'request',
    id: '1.1',
    method: 'workbench.dispatch',
    authority: { class: 'user', subject: 'user:a' },
    payload: Buffer.from('{}'),
  },
  { kind: 'request', id: '1.2', method: 'm', authority: null, payload: Buffer.alloc(0) },
  {
    kind: 'response',
    id: '1.1',
    ok: false,
    errorCode: 'invalid_path',
    message: 'no',
    payload: Buffer.from('1'),
  },
  { kind: 'output', id: '1.1', stream: 'stderr', chunk: Buffer.from('oops') },
  { kind: 'output', id: '1.1', stream: 'stdout', chunk: Buffer.from('fine') },
  { kind: 'output', id: '1.1', stream: 'stdout', chunk: Buffer.alloc(0) },
  { kind: 'cancel', id: '1.1' },
];

t.test('every frame kind survives the proto round trip', async (t) => {
  for (const f of frames) t.same(roundTrip(f), { ok: true, frame: f }, f.kind);
});

t.test("the node service's codec writes and reads what proto-loader does", async (t) => {
  const loaded = loadSync('memql/node/v1/node.proto', {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [protoDir()],
  });
  const reference = (loaded[NODE_SERVICE_NAME] as ServiceDefinition).Stream!;
  for (const f of frames) {
    const ours = method.requestSerialize(encodeFrame(f));
    const theirs = reference.requestSerialize(encodeFrame(f));
    t.ok(Buffer.isBuffer(ours), `${f.kind}: a Buffer`);
    t.equal(ours.toString('hex'), theirs.toString('hex'), `${f.kind}: the same bytes`);
    t.same(
      decodeFrame(method.responseDeserialize(theirs)),
      decodeFrame(reference.responseDeserialize(theirs)),
      `${f.kind}: read the same`,
    );
  }
});

t.test('health toolchains: absent is unknown, unknown tool names are dropped', async (t) => {
  // A Health frame from a replica that predates the field: no toolchain, not "can build".
  const old = decodeFrame(
    method.requestDeserialize(
      method.requestSerialize({ health: { healthy: true, running: 0, queued: 0, capacity: 1 } }),
    ),
  );
  t.same(old, {
    ok: true,
    frame: { kind: 'health', healthy: true, running: 0, queued: 0, capacity: 1 },
  });
  t.notOk(old.ok && 'toolchain' in old.frame, 'no toolchain key at all');
  const newer = decodeFrame(
    method.requestDeserialize(
      method.requestSerialize({
        health: {
          healthy: true,
          capacity: 1,
          toolchain: { missing: ['pnpm', 'npm', 'npm'], probeFailed: '' },
        },
      }),
    ),
  );
  t.same(newer.ok && newer.frame.kind === 'health' && newer.frame.toolchain, {
    status: 'probed',
    missing: ['npm'],
  });
  // A probe failure with no reason still reads as a failure, never as "nothing missing".
  const failed = roundTrip({
    kind: 'health',
    healthy: true,
    running: 0,
    queued: 0,
    capacity: 1,
    toolchain: { status: 'probe_failed', reason: '' },
  });
  t.match(failed.ok && failed.frame.kind === 'health' && failed.frame.toolchain, {
    status: 'probe_failed',
  });
});

t.test('malformed frames say what is wrong, with the id when there is one', async (t) => {
  const cases: [unknown, string, string][] = [
    [null, 'not a message', ''],
    [{}, 'no frame kind', ''],
    [{ kind: 'request', request: { id: '', method: 'm' } }, 'request id is empty', ''],
    [
      { kind: 'request', request: { id: 'x'.repeat(200), method: 'm' } },
      'longer than',
      'x'.repeat(128),
    ],
    [{ kind: 'request', request: { id: 'r', method: '' } }, 'method is empty', 'r'],
    [
      {
        kind: 'request',
        request: { id: 'r', method: 'm', authority: { class: 'root', subject: 's' } },
      },
      'authority class',
      'r',
    ],
    [{ kind: 'output', output: { id: 'r' } }, 'no chunk', 'r'],
    [{ kind: 'cancel', cancel: { id: '' } }, 'cancel id is empty', ''],
    [{ kind: 'weird', weird: {} }, 'unknown frame kind', ''],
  ];
  for (const [input, problem, id] of cases) {
    const d = decodeFrame(input);
    t.equal(d.ok, false, problem);
    if (!d.ok) {
      t.match(d.problem, problem);
      t.equal(d.id, id);
    }
  }
  const de = tolerantDeserializer(method.requestDeserialize, 10);
  t.match(decodeFrame(de(Buffer.from([0xff, 0xff, 0xff]))), { ok: false, problem: /not a memql/ });
  t.match(decodeFrame(de(Buffer.alloc(11))), { ok: false, problem: /over the 10-byte limit/ });
});

t.test('mesh token: constant-time compare, refused when missing or wrong', async (t) => {
  t.equal(tokensEqual('abc', 'abc'), true);
  t.equal(tokensEqual('abc', 'abd'), false);
  t.equal(tokensEqual('abc', 'abcd'), false, 'different lengths compare without throwing');
  const token = 'secret-0123456789abcdef';
  t.same(checkMeshToken(token, meshTokenMetadata(token)), { ok: true, authenticated: true });
  t.same(checkMeshToken(token, meshTokenMetadata('nope-0123456789abcdef')), {
    ok: false,
    reason: 'wrong',
  });
  t.same(checkMeshToken(token, meshTokenMetadata(null)), { ok: false, reason: 'missing' });
  const raw = meshTokenMetadata(null);
  raw.set('authorization', token);
  t.same(
    checkMeshToken(token, raw),
    { ok: false, reason: 'missing' },
    'the Bearer scheme is required',
  );
  t.same(checkMeshToken(null, meshTokenMetadata(token)), { ok: true, authenticated: false });
});

t.test('authority on the wire is re-derived; system only from an authenticated peer', async (t) => {
  const user = userAuthority('user:alice');
  const system = systemAuthority('system:deploy');
  t.same(authorityToWire(user), { class: 'user', subject: 'user:alice' });
  t.same(authorityToWire(system), { class: 'system', subject: 'system:deploy' });
  t.equal(
    authorityToWire({ class: 'system', subject: 'system:deploy' }),
    null,
    'an unminted system claim is never sent',
  );

  const fromUser = authorityFromWire({ class: 'user', subject: 'user:alice' }, false);
  t.match(fromUser, { ok: true, authority: { class: 'user', subject: 'user:alice' } });
  t.match(authorityFromWire({ class: 'system', subject: 'system:deploy' }, false), {
    ok: false,
    errorCode: 'forbidden',
  });
  const fromSystem = authorityFromWire({ class: 'system', subject: 'system:deploy' }, true);
  t.equal(fromSystem.ok, true);
  t.match(authorityFromWire({ class: 'system', subject: 'user:alice' }, true), {
    ok: false,
    errorCode: 'forbidden',
  });
  t.match(authorityFromWire({ class: 'user', subject: 'system:deploy' }, true), {
    ok: false,
    errorCode: 'invalid_arguments',
  });
  t.match(authorityFromWire(null, true), { ok: false, errorCode: 'invalid_arguments' });
});

t.test('dispatch results survive the wire', async (t) => {
  const response = (r: Parameters<typeof answerFromResult>[0]) =>
    resultFromResponse(responseFrame('1', answerFromResult(r)));
  for (const r of [
    okResult({ path: 'a', size: 1 }),
    okResult(null),
    errorResult('invalid_path', 'invalid_path: no'),
    errorResult('environment_mismatch', 'environment_mismatch: gpu', { unmetNeeds: ['gpu'] }),
  ]) {
    t.same(response(r), r);
  }
  t.match(
    resultFromResponse({
      kind: 'response',
      id: '1',
      ok: false,
      errorCode: 'made_up',
      message: 'x',
      payload: Buffer.alloc(0),
    }),
    { ok: false, errorCode: 'internal' },
    'an unknown code is not trusted',
  );
  t.match(
    resultFromResponse({
      kind: 'response',
      id: '1',
      ok: true,
      errorCode: '',
      message: '',
      payload: Buffer.from('{'),
    }),
    { ok: false, errorCode: 'internal' },
  );
});

t.test('a thrown error crosses as the code it answers, and comes back as its error', async (t) => {
  const outage = resultFromResponse(
    responseFrame('1', answerFromError(new ObjectStoreUnavailableError('s3 at 10.0.0.9 down'))),
  );
  t.match(outage, { ok: false, errorCode: 'unavailable', payload: { reason: 'object_store' } });
  t.notMatch(JSON.stringify(outage), '10.0.0.9', 'the foreign message stays on the node');
  const bug = resultFromResponse(responseFrame('1', answerFromError(new Error('boom'))));
  t.match(bug, { ok: false, errorCode: 'internal' });
  const back = errorFromResponse(
    responseFrame(
      '1',
      answerFromResult(errorResult('port_not_listening', 'port_not_listening: 9')),
    ),
  );
  t.ok(back instanceof WorkbenchError);
  t.equal(back.code, 'port_not_listening');
});

t.test('a refused stream ends with the gRPC status of its code', async (t) => {
  t.same(streamRefusal('unauthenticated', 'unauthenticated: x'), {
    code: status.UNAUTHENTICATED,
    details: 'unauthenticated: x',
  });
  t.equal(streamRefusal('unavailable', 'u').code, status.UNAVAILABLE);
  t.equal(streamRefusal('invalid_arguments', 'i').code, status.INVALID_ARGUMENT);
  t.equal(streamRefusal('forbidden', 'f').code, status.PERMISSION_DENIED);
  t.equal(streamRefusal('internal', 'b').code, status.INTERNAL);
});

t.test('the proto loads from the package root, compiled or not', async (t) => {
  t.match(packageVersion(), /^\d+\.\d+\.\d+/);
  t.ok(loadMeshProtos().healthService.Check);
});
