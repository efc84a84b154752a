import t from 'tap';
import { docker, dockerOk, image, requireImages } from './containers.js';

/**
 * What each node image carries and how it starts: the agent has no sandbox tooling
 * and no compilers and runs unprivileged; the workbench has bubblewrap, setpriv and
 * the operator's tools and keeps workspaces under /var/lib/memql/workbenches, and its
 * compiled code carries the warm sandbox's agent; the runtime workbench adds node, npm
 * and git, usable by uid 10001.
 */

t.setTimeout(300_000);
await requireImages(['agent', 'workbench', 'workbench-runtime']);

async function config(target: 'agent' | 'workbench' | 'workbench-runtime') {
  return JSON.parse(
    await dockerOk(['image', 'inspect', '--format', '{{json .Config}}', image(target)]),
  ) as {
    User: string;
    Env: string[];
    Entrypoint: string[];
    ExposedPorts?: Record<string, unknown>;
  };
}

function shell(target: 'agent' | 'workbench' | 'workbench-runtime', script: string, user?: string) {
  return docker([
    'run',
    '--rm',
    '--network',
    'none',
    ...(user ? ['--user', user] : []),
    '--entrypoint',
    '/bin/sh',
    image(target),
    '-c',
    script,
  ]);
}

const tools = (names: string[]) =>
  names.map((n) => `printf '%s=' ${n}; command -v ${n} || echo missing`).join('; ');

t.test('agent: unprivileged, no sandbox tooling, no compilers, the CLI on PATH', async (t) => {
  const c = await config('agent');
  t.equal(c.User, '10000:10000');
  t.ok(c.Env.includes('MEMQL_HTTP_LISTEN=0.0.0.0:8080'));
  t.ok(c.ExposedPorts?.['8080/tcp']);
  const r = await shell(
    'agent',
    `id -u; ${tools(['bwrap', 'setpriv', 'gcc', 'cc', 'make', 'memql'])}`,
  );
  const lines = r.stdout.trim().split('\n');
  t.equal(lines[0], '10000');
  for (const absent of ['bwrap', 'gcc', 'cc', 'make']) {
    t.ok(lines.includes(`${absent}=missing`), `${absent} is not in the agent image`);
  }
  t.ok(lines.includes('memql=/usr/local/bin/memql'), lines.join(' '));
  const help = await shell('agent', 'memql --help');
  t.equal(help.code, 0, help.stderr);
  t.match(help.stdout + help.stderr, /memql/);
});

t.test('workbench: bubblewrap, setpriv, the operator’s tools, the workspace root', async (t) => {
  const c = await config('workbench');
  t.ok(c.Env.includes('MEMQL_WORKBENCH_ROOT=/var/lib/memql/workbenches'));
  t.same(c.Entrypoint.slice(0, 2), ['/usr/bin/tini', '--'], 'tini is process 1');
  t.ok(c.ExposedPorts?.['50060/tcp']);
  const r = await shell(
    'workbench',
    `${tools(['bwrap', 'setpriv', 'ls', 'cat', 'du', 'git', 'npm'])}; stat -c '%a %U' /var/lib/memql/workbenches; getent passwd 10001`,
  );
  const lines = r.stdout.trim().split('\n');
  for (const present of ['bwrap', 'setpriv', 'ls', 'cat', 'du']) {
    t.notOk(lines.includes(`${present}=missing`), `${present} is in the workbench image`);
  }
  t.ok(lines.includes('git=missing'), 'no git: only the runtime image can build');
  t.ok(lines.includes('755 root'), 'the root is reachable by the sandbox uid');
  t.match(lines.at(-1), /^sandbox:x:10001:10001:/);
});

t.test('workbench: the warm sandbox agent, and perl to run it', async (t) => {
  const agent = '/app/dist/src/sandbox/bwrap/session-agent.pl';
  const r = await shell('workbench', `/usr/bin/perl -c ${agent}`);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, /syntax OK/);
});

t.test('workbench-runtime: node, npm and git for uid 10001', async (t) => {
  const r = await shell(
    'workbench-runtime',
    'id -u; node --version; npm --version; git --version',
    '10001:10001',
  );
  t.equal(r.code, 0, r.stderr);
  const [uid, node, npm, git] = r.stdout.trim().split('\n');
  t.equal(uid, '10001');
  t.match(node, /^v\d+\./);
  t.match(npm, /^\d+\./);
  t.match(git, /^git version /);
  // As the docker runner's image of a replica that builds, commands start through the
  // runner init its label names (process 1 that keeps the environment out of reach).
  const labels = JSON.parse(
    await dockerOk([
      'image',
      'inspect',
      '--format',
      '{{json .Config.Labels}}',
      image('workbench-runtime'),
    ]),
  ) as Record<string, string>;
  t.equal(labels['memql.runner.init'], '/usr/local/sbin/memql-runner-init');
  const init = await shell(
    'workbench-runtime',
    'test -x /usr/local/sbin/memql-runner-init && echo ok',
  );
  t.equal(init.stdout.trim(), 'ok', init.stderr);
});

t.test('the workbench image refuses an open gRPC port without a mesh token', async (t) => {
  const r = await docker([
    'run',
    '--rm',
    '--network',
    'none',
    '-e',
    'MEMQL_DATABASE_URL=postgres://nobody@127.0.0.1:1/none',
    image('workbench'),
  ]);
  t.equal(r.code, 2, `exit 2; stderr: ${r.stderr}`);
  t.match(r.stderr, /MEMQL_MESH_TOKEN/);
  t.match(r.stderr, /MEMQL_GRPC_LISTEN/);
});

t.test('every image runs the Node.js the tests run on (22 or later)', async (t) => {
  for (const target of ['agent', 'workbench', 'workbench-runtime'] as const) {
    const r = await shell(target, 'node --version');
    t.equal(r.stdout.trim(), process.version, `${target} runs ${process.version}`);
  }
});
