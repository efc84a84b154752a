import { PassThrough } from 'node:stream';
import t from 'tap';
import { createLogger, REDACTED_CENSOR, redactForLog } from '../../src/telemetry/logger.js';

/** A node logger writing into memory, and the text it wrote once flushed. */
function capture() {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (c: Buffer) => chunks.push(c.toString()));
  const log = createLogger({ nodeId: 'n1', nodeType: 'workbench', destination: out });
  const text = async () => {
    log.flush();
    await new Promise((r) => setImmediate(r));
    return chunks.join('');
  };
  return { log, text };
}

t.test('secrets and agent data are redacted at any depth', async (t) => {
  const { log, text: written } = capture();
  const canary = 'CANARY-7f3a';
  log.info(
    { meshToken: canary, config: { password: canary, s3: { secretAccessKey: canary } } },
    'a',
  );
  log
    .child({ runId: 'r1' })
    .child({ token: canary })
    .info({ request: { command: `echo ${canary}`, env: { K: canary } } }, 'b');
  const text = await written();
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.equal(lines.length, 2);
  t.equal(lines[0]!.node, 'n1');
  t.equal(lines[1]!.runId, 'r1', 'child loggers carry their scope');
  t.equal(lines[1]!.token, '[redacted]', "a child's child's bindings are redacted too");
  t.notMatch(text, canary, 'the canary appears on no line');
  t.match(text, '[redacted]');
});

t.test('an error is redacted once serialized, and keeps its type, message and stack', async (t) => {
  const { log, text } = capture();
  const canary = 'CANARY-e41b';
  class SpawnError extends Error {}
  const err = Object.assign(new SpawnError('spawn failed'), {
    command: `cat ${canary}`,
    detail: { stdout: canary, exitCode: 3 },
  });
  log.error({ err, runId: 'r1', config: { token: canary } }, 'failed');
  const written = await text();
  const line = JSON.parse(written.trim()) as {
    err: { type: string; message: string; stack: string; command: string; detail: unknown };
    runId: string;
    config: unknown;
  };
  t.notMatch(written, canary, 'the canary appears nowhere on the line');
  t.equal(line.err.type, 'SpawnError');
  t.equal(line.err.message, 'spawn failed');
  t.match(line.err.stack, /spawn failed/);
  t.equal(line.err.command, '[redacted]');
  t.same(line.err.detail, { stdout: '[redacted]', exitCode: 3 });
  t.equal(line.runId, 'r1');
  t.same(line.config, { token: '[redacted]' });
  t.equal(err.command, `cat ${canary}`, "the caller's error is not changed");
});

t.test(
  'redactForLog: the levels pino paths k, *.k and *.*.k covered, copies only on the way',
  async (t) => {
    const c = REDACTED_CENSOR;
    const cases: [string, unknown, unknown][] = [
      ['top level', { token: 's', a: 1 }, { token: c, a: 1 }],
      ['one down', { a: { password: 's', b: 2 } }, { a: { password: c, b: 2 } }],
      ['two down', { a: { b: { env: { K: 's' } } } }, { a: { b: { env: c } } }],
      [
        'three down is past the paths',
        { a: { b: { c: { token: 's' } } } },
        { a: { b: { c: { token: 's' } } } },
      ],
      [
        'in arrays',
        { files: [{ content: 's', path: 'p' }] },
        { files: [{ content: c, path: 'p' }] },
      ],
      ['undefined stays undefined', { stdout: undefined }, { stdout: undefined }],
      ['null and scalars', { a: null, b: 'x', command: null }, { a: null, b: 'x', command: c }],
    ];
    for (const [name, input, expected] of cases) {
      const before = JSON.stringify(input);
      t.same(redactForLog(input), expected, name);
      t.equal(JSON.stringify(input), before, `${name}: the input is not changed`);
    }
    const clean = { a: { b: [1, 2] }, n: 3 };
    t.equal(redactForLog(clean), clean, 'an object with nothing to redact is returned as it is');
    const bytes = Buffer.from('token');
    t.equal(redactForLog({ bytes }).bytes, bytes, 'byte arrays are not walked');
  },
);
