import t from 'tap';
import {
  ERROR_CODE_LIST,
  ERROR_CODES,
  errorCategory,
  errorResult,
  INTERNAL_ERROR_MESSAGE,
  isErrorCode,
  okResult,
  resultFromError,
  WorkbenchError,
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
