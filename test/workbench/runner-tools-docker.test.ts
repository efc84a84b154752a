import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { type DispatchResult, type ExecPayload, userAuthority } from '../../src/contract/index.js';
import { createRun, openDb } from '../../src/store/index.js';
import { createWorkbenchHost } from '../../src/workbench/host-factory.js';
import { connectTestDocker, TEST_RUNNER_IMAGE } from '../support/docker.js';
import { parsedEnvelope } from '../support/envelope.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The runner image's own tools through the whole exec path, as a node builds it from
 * its configuration: on the docker runner with the locally built `runner` image, the
 * allowlist admits what the image declares, so a DOCX made in the test converts to PDF
 * with LibreOffice, renders with Poppler, and the page converts with ImageMagick. On
 * bwrap (the node's own system) the same programs stay refused, the refusal listing
 * what is allowed.
 */

const docker = await connectTestDocker();
const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-runner-tools-'));
await chmod(base, 0o755);
t.teardown(() => rm(base, { recursive: true, force: true }));
await createRun(db, { id: 'run-docs', ownerUserId: 'u' });
const log = pino({ level: 'silent' });

async function build(env: Record<string, string>) {
  const config = loadConfig(
    { MEMQL_WORKBENCH_ROOT: join(base, 'wb'), MEMQL_DATA_DIR: join(base, 'data'), ...env },
    { hostname: 'docs-node' },
  );
  const built = await createWorkbenchHost(config, {
    db,
    log,
    docker,
    platform: 'linux',
    runsAsRoot: process.getuid?.() === 0,
  });
  return built.host;
}

function exec(host: Awaited<ReturnType<typeof build>>, command: string): Promise<DispatchResult> {
  return host.handleDispatch(
    parsedEnvelope({
      action: 'exec',
      args: { command, timeoutMs: 300_000 },
      runId: 'run-docs',
      agentId: 'a',
      taskId: 't',
    }),
    userAuthority('user:u'),
  );
}

/** The command's payload, failing the test with its output when it did not exit 0. */
async function ran(t: Test, host: Awaited<ReturnType<typeof build>>, command: string) {
  const r = await exec(host, command);
  t.ok(r.ok, r.ok ? command : `${command}: ${r.errorCode} ${r.message}`);
  const payload = (r.ok ? r.payload : {}) as ExecPayload;
  t.equal(payload.exitCode, 0, `${command}\n${payload.stderr ?? ''}`);
  return payload;
}

t.test('on the docker runner: DOCX to PDF, PDF to PNG, PNG to JPEG', async (t) => {
  const host = await build({ MEMQL_RUNNER: 'docker', MEMQL_RUNNER_IMAGE: TEST_RUNNER_IMAGE });
  t.teardown(() => host.stop());
  await ran(
    t,
    host,
    `python3 -c 'import docx; d = docx.Document(); d.add_heading("Kestrel survey", 1); d.add_paragraph("Wrens counted: 4"); d.save("report.docx")'`,
  );
  await ran(t, host, 'soffice --headless --convert-to pdf --outdir out report.docx');
  const text = await ran(t, host, 'pdftotext out/report.pdf -');
  t.match(text.stdout, 'Kestrel survey');
  t.match(text.stdout, 'Wrens counted: 4');
  await ran(t, host, 'pdftoppm -png -r 40 -singlefile out/report.pdf out/page');
  await ran(t, host, 'convert out/page.png -resize 50% out/page.jpg');
  const info = await ran(t, host, "identify -format '%m' out/page.jpg");
  t.equal(info.stdout, 'JPEG');
  const listed = await ran(t, host, 'file -b --mime-type out/report.pdf out/page.png');
  t.same(listed.stdout.trim().split('\n'), ['application/pdf', 'image/png']);
});

t.test(
  'on bwrap the same programs stay refused, and the refusal lists what is allowed',
  async (t) => {
    const host = await build({ MEMQL_RUNNER: 'bwrap' });
    t.teardown(() => host.stop());
    const r = await exec(host, 'soffice --headless --convert-to pdf report.docx');
    t.equal(r.ok ? 'ok' : r.errorCode, 'command_not_allowed');
    const payload = (r.ok ? {} : r.payload) as { name: string; allowed: string[] };
    t.equal(payload.name, 'soffice');
    t.ok(payload.allowed.includes('python3'));
    t.notOk(payload.allowed.includes('soffice'));
  },
);
