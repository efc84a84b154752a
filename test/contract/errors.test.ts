import t from 'tap';
import {
  codeForHttpStatus,
  DependencyError,
  ERROR_CODE_LIST,
  ERROR_CODES,
  errorCategory,
  errorFromResult,
  errorResult,
  httpStatusOf,
  INTERNAL_ERROR_MESSAGE,
  isErrorCode,
  isRetryable,
  okResult,
  resultFromError,
  WorkbenchError,
  workbenchErrorOf,
} from '../../src/contract/index.js';

const REQUIRED_CODES = [
  'invalid_arguments',
  'invalid_path',
  'path_not_found',
  'payload_too_large',
  'command_not_allowed',
  'no_sandbox',
  'environment_mismatch',
  'invalid_environment_hint',
  'no_workbench_peer',
  'workspace_owner_unresolved',
  'build_not_permitted',
  'build_unavailable',
  'fetch_blocked',
  'fetch_failed',
  'not_found',
  'unauthenticated',
  'internal',
];

t.test('the list holds every code the design names, each documented', async (t) => {
  for (const code of REQUIRED_CODES) {
    t.ok(isErrorCode(code), `${code} is a code`);
  }
  for (const code of ERROR_CODE_LIST) {
    t.ok(ERROR_CODES[code].meaning.length > 10, `${code} has a meaning`);
    t.ok(
      ['caller', 'policy', 'environment', 'dependency', 'internal'].includes(errorCategory(code)),
      `${code} has a category`,
    );
  }
  t.strictSame([...ERROR_CODE_LIST].sort(), Object.keys(ERROR_CODES).sort());
});

t.test('isErrorCode rejects everything else', async (t) => {
  // Command statuses are not refusal reasons; prototype keys must not pass as codes.
  for (const value of [
    'cancelled',
    'timed_out',
    'toString',
    '__proto__',
    'Internal',
    '',
    5,
    null,
    undefined,
    {},
  ]) {
    t.notOk(isErrorCode(value), `${JSON.stringify(value)} is not a code`);
  }
});

t.test('a categorised sample', async (t) => {
  t.equal(errorCategory('invalid_environment_hint'), 'caller');
  t.equal(errorCategory('environment_mismatch'), 'environment');
  t.equal(errorCategory('build_not_permitted'), 'policy');
  t.equal(errorCategory('build_unavailable'), 'environment');
  t.equal(errorCategory('unavailable'), 'dependency');
  t.equal(errorCategory('internal'), 'internal');
});

t.test('WorkbenchError carries code, message and payload', async (t) => {
  const cause = new Error('inner');
  const err = new WorkbenchError(
    'path_not_found',
    'path_not_found: a.txt',
    { path: 'a.txt' },
    { cause },
  );
  t.ok(err instanceof Error);
  t.equal(err.name, 'WorkbenchError');
  t.equal(err.code, 'path_not_found');
  t.equal(err.message, 'path_not_found: a.txt');
  t.strictSame(err.payload, { path: 'a.txt' });
  t.equal(err.cause, cause);
});

t.test('result helpers', async (t) => {
  t.strictSame(okResult({ n: 1 }), { ok: true, payload: { n: 1 } });
  const bare = errorResult('not_found', 'not_found: run r1');
  t.strictSame(bare, { ok: false, errorCode: 'not_found', message: 'not_found: run r1' });
  t.notOk('payload' in bare, 'no payload key when none is given');
  t.strictSame(errorResult('fetch_failed', 'm', { status: 502 }).payload, { status: 502 });
});

t.test('resultFromError keeps WorkbenchError and hides everything else', async (t) => {
  const known = resultFromError(
    new WorkbenchError('invalid_path', 'invalid_path: ../x', { path: '../x' }),
  );
  t.strictSame(known, {
    ok: false,
    errorCode: 'invalid_path',
    message: 'invalid_path: ../x',
    payload: { path: '../x' },
  });

  const secret = 'postgres://admin:hunter2@db/prod';
  const foreign: unknown[] = [
    new Error(`connect failed: ${secret}`),
    Object.assign(new Error(`boom ${secret}`), { code: 'path_not_found' }),
    { code: 'invalid_path', message: secret },
    secret,
    undefined,
  ];
  for (const thrown of foreign) {
    const result = resultFromError(thrown);
    t.equal(result.errorCode, 'internal');
    t.equal(result.message, INTERNAL_ERROR_MESSAGE);
    t.notOk('payload' in result);
    t.notMatch(JSON.stringify(result), /hunter2|stack|at /);
  }
});

t.test('every code has one HTTP status, and its retry intent', async (t) => {
  for (const code of ERROR_CODE_LIST) {
    const status = httpStatusOf(code);
    t.ok(status >= 400 && status < 600, `${code} answers an error status`);
    t.equal(typeof isRetryable(code), 'boolean');
    if (errorCategory(code) === 'dependency') t.ok(isRetryable(code), `${code} may be retried`);
    if (errorCategory(code) === 'caller' || errorCategory(code) === 'policy') {
      t.notOk(isRetryable(code), `${code} is not retried unchanged`);
      // The port route is a gateway: nothing listening behind it is a 502, as a proxy says.
      if (code !== 'port_not_listening') t.ok(status < 500, `${code} is the caller's: a 4xx`);
    }
  }
  const sample: [string, number][] = [
    ['invalid_arguments', 400],
    ['unauthenticated', 401],
    ['forbidden', 403],
    ['person_required', 403],
    ['not_found', 404],
    ['path_not_found', 404],
    ['version_not_found', 404],
    ['run_ended', 409],
    ['call_id_conflict', 409],
    ['payload_too_large', 413],
    ['workspace_quota_exceeded', 413],
    ['internal', 500],
    ['port_not_listening', 502],
    ['unavailable', 503],
    ['no_workbench_peer', 503],
  ];
  for (const [code, status] of sample) t.equal(httpStatusOf(code as never), status, code);
});

t.test('a bare HTTP status reads back as the code it stands for', async (t) => {
  for (const status of [400, 401, 403, 404, 409, 413, 500, 503]) {
    t.equal(httpStatusOf(codeForHttpStatus(status)), status, `${status} round-trips`);
  }
  t.equal(codeForHttpStatus(502), 'unavailable', 'a gateway that reached no server');
  t.equal(codeForHttpStatus(504), 'unavailable');
  t.equal(codeForHttpStatus(418), 'internal');
});

/** A dependency's failure as its edge translates one. */
class FakeOutage extends DependencyError {
  constructor(readonly down: boolean) {
    super('connect ECONNREFUSED 10.0.0.7:5432 (postgres://admin:hunter2@db)');
  }
  answer(): WorkbenchError | null {
    return this.down
      ? new WorkbenchError('unavailable', 'unavailable: the thing is down', { reason: 'thing' })
      : null;
  }
}

t.test('a dependency error answers what its edge says, and nothing of its own', async (t) => {
  t.strictSame(resultFromError(new FakeOutage(true)), {
    ok: false,
    errorCode: 'unavailable',
    message: 'unavailable: the thing is down',
    payload: { reason: 'thing' },
  });
  const bug = resultFromError(new FakeOutage(false));
  t.strictSame(bug, { ok: false, errorCode: 'internal', message: INTERNAL_ERROR_MESSAGE });
  t.notMatch(JSON.stringify(bug), /hunter2|ECONNREFUSED/);
  const known = new WorkbenchError('invalid_path', 'invalid_path: x');
  t.equal(workbenchErrorOf(known), known, 'a WorkbenchError is itself');
  t.equal(workbenchErrorOf(new Error('boom')).code, 'internal');
});

t.test('a failure converts back to the error it was', async (t) => {
  const failure = errorResult('call_id_conflict', 'call_id_conflict: used', { callId: 'c1' });
  const err = errorFromResult(failure);
  t.ok(err instanceof WorkbenchError);
  t.strictSame(
    [err.code, err.message, err.payload],
    ['call_id_conflict', failure.message, { callId: 'c1' }],
  );
  t.strictSame(resultFromError(err), failure, 'and round-trips');
});
