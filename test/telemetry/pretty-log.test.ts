import t from 'tap';
import { createLogger } from '../../src/telemetry/logger.js';
import { prettyLine } from '../../src/telemetry/pretty-log.js';

t.test('a record is one short line: time, level, message, the fields that vary', async (t) => {
  const line = prettyLine(
    JSON.stringify({
      level: 40,
      time: '2030-01-02T03:04:05.678Z',
      node: 'local-1',
      nodeType: 'local',
      msg: 'workspaces kept in the temp folder',
      runId: 'run-1',
      reason: '/root is not searchable',
      count: 3,
    }),
  );
  t.equal(
    line,
    '03:04:05.678 WARN  workspaces kept in the temp folder runId=run-1 reason="/root is not searchable" count=3\n',
  );
  const long = prettyLine(JSON.stringify({ level: 30, msg: 'm', config: { x: 'y'.repeat(500) } }));
  t.ok(long.length < 200, 'a long value is cut');
  t.match(long, /…\n$/);
  const failed = prettyLine(
    JSON.stringify({
      level: 50,
      msg: 'boom',
      err: { message: 'bad', stack: 'Error: bad\n    at f' },
    }),
  );
  t.equal(
    failed,
    'ERROR boom err=bad\n    Error: bad\n        at f\n',
    'an error shows its stack below',
  );
  t.equal(prettyLine('not json'), 'not json\n', 'a line that is not a record passes through');
});

t.test('the pretty format writes through the same redaction', async (t) => {
  const lines: string[] = [];
  const log = createLogger({
    nodeId: 'n1',
    nodeType: 'local',
    format: 'pretty',
    destination: { write: (s: string) => lines.push(s) },
  });
  log.info({ token: 'mqt_secret', runId: 'run-9' }, 'hello');
  log.child({ authorization: 'Bearer x' }).warn('child line');
  t.equal(lines.length, 2);
  t.match(lines[0]!, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}hello token="\[redacted\]" runId=run-9\n$/);
  t.match(lines[1]!, /WARN {2}child line authorization="\[redacted\]"/);
  t.notMatch(lines.join(''), /mqt_secret|Bearer x/);
});
