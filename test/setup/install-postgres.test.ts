import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { docker, freePort, TestContainer } from '../deploy/containers.js';
import { REPO_ROOT } from '../support/readme.js';

/**
 * scripts/setup/install-postgres.sh on a Debian machine with no PostgreSQL: a container
 * of the bookworm base that scripts/setup/install-images.sh makes (Node.js, apt, nothing
 * else), on the host's network so that apt reaches the Debian mirror and this test
 * reaches the server, on a free port so that the host's own server keeps 5432. An
 * ordinary user is told what to run; root gets a server that the `postgres` client
 * reaches as user postgres without a password, database "test"; a second run changes
 * nothing, and a stopped cluster is started again. A missing daemon or base image fails
 * the test, never skips it.
 */

t.setTimeout(900_000);

const BASE = process.env.MEMQL_IMAGE_BASE ?? 'memql/ci-base:bookworm-node';
const FIX = 'run scripts/setup/install-docker.sh and scripts/setup/install-images.sh (as root)';
if ((await docker(['info', '--format', '{{.ServerVersion}}'])).code !== 0) {
  throw new Error(`the Docker daemon does not answer: ${FIX}`);
}
if ((await docker(['image', 'inspect', '--format', '{{.Id}}', BASE])).code !== 0) {
  throw new Error(`the Debian base ${BASE} is missing: ${FIX}`);
}

const port = await freePort();
const container = await TestContainer.run(t, {
  name: `memql-setup-postgres-${randomBytes(4).toString('hex')}`,
  image: BASE,
  args: [
    '--init',
    '--network',
    'host',
    '--volume',
    `${resolve(REPO_ROOT, 'scripts/setup')}:/setup:ro`,
  ],
  command: ['sleep', 'infinity'],
});

/** Runs the script in the container as `user`, on the test's port. */
function install(user: string) {
  return docker([
    'exec',
    '--user',
    user,
    '--env',
    `MEMQL_SETUP_PG_PORT=${port}`,
    container.name,
    'bash',
    '/setup/install-postgres.sh',
  ]);
}

/** Connects as the tests do (user postgres, no password, database test) and asks. */
async function ask(): Promise<{ one: number; port: string; started: Date }> {
  const sql = postgres({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'test',
    max: 1,
    connect_timeout: 10,
    onnotice: () => {},
  });
  try {
    const [row] = await sql<{ one: number; port: string; started: Date }[]>`
      select 1 as one, current_setting('port') as port, pg_postmaster_start_time() as started`;
    if (row === undefined) throw new Error('select answered no row');
    return row;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

t.test('an ordinary user with nothing installed is told what to run', async (t) => {
  const r = await install('65534:65534');
  t.not(r.code, 0, 'it exits non-zero');
  t.match(r.stderr, `sudo MEMQL_SETUP_PG_PORT=${port} bash /setup/install-postgres.sh`);
});

let firstStart: Date | undefined;

t.test('root with nothing installed gets PostgreSQL on the port, database test', async (t) => {
  const r = await install('root');
  t.equal(r.code, 0, `the script succeeds (stderr: ${r.stderr})`);
  const row = await ask();
  t.equal(row.one, 1, 'select 1 on database test as postgres, without a password');
  t.equal(row.port, String(port), 'the cluster listens on the port asked for');
  firstStart = row.started;
});

t.test('a second run leaves the running server alone', async (t) => {
  const r = await install('root');
  t.equal(r.code, 0, `the script succeeds (stderr: ${r.stderr})`);
  t.same((await ask()).started, firstStart, 'the same postmaster answers');
});

t.test('a stopped cluster is started again', async (t) => {
  const stop = await container.exec([
    'bash',
    '-c',
    'pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main stop',
  ]);
  t.equal(stop.code, 0, `the cluster stops (stderr: ${stop.stderr})`);
  await t.rejects(ask(), 'nothing answers once it is stopped');
  const r = await install('root');
  t.equal(r.code, 0, `the script succeeds (stderr: ${r.stderr})`);
  const row = await ask();
  t.equal(row.one, 1);
  t.ok(firstStart && row.started > firstStart, 'a new postmaster answers');
});
