import { PassThrough } from 'node:stream';
import t from 'tap';
import { createLogger } from '../../src/telemetry/logger.js';

t.test('secrets and agent data are redacted at any depth', async (t) => {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (c: Buffer) => chunks.push(c.toString()));
  const log = createLogger({ nodeId: 'n1', nodeType: 'workbench', destination: out });
  const canary = 'CANARY-7f3a';
  log.info(
    { meshToken: canary, config: { password: canary, s3: { secretAccessKey: canary } } },
    'a',
  );
  log
    .child({ runId: 'r1' })
    .info({ request: { command: `echo ${canary}`, env: { K: canary } } }, 'b');
  log.flush();
  await new Promise((r) => setImmediate(r));
  const text = chunks.join('');
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.equal(lines.length, 2);
  t.equal(lines[0]!.node, 'n1');
  t.equal(lines[1]!.runId, 'r1', 'child loggers carry their scope');
  t.notMatch(text, canary, 'the canary appears on no line');
  t.match(text, '[redacted]');
});
