import t from 'tap';
import { checkRunId, isRunId, MAX_RUN_ID_CHARS } from '../../src/contract/index.js';

const VALID = [
  'r1',
  'run_2024-01-01.a',
  '0f8fad5b-d9cb-469f-a165-70867728950e',
  'A'.repeat(MAX_RUN_ID_CHARS),
];
const INVALID = [
  '',
  '.',
  '..',
  '.hidden',
  '-rf',
  'a/b',
  'a\\b',
  'a\0b',
  '../etc',
  'has space',
  'ümlaut',
  'A'.repeat(MAX_RUN_ID_CHARS + 1),
];

t.test('valid run ids', async (t) => {
  for (const id of VALID) {
    t.equal(checkRunId(id), null, JSON.stringify(id));
    t.ok(isRunId(id));
  }
});

t.test('invalid run ids say why', async (t) => {
  for (const id of INVALID) {
    const problem = checkRunId(id);
    t.type(problem, 'string', JSON.stringify(id));
    t.notOk(isRunId(id));
  }
  t.notOk(isRunId(42));
  t.notOk(isRunId(undefined));
});
