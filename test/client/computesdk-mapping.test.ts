import { join } from 'node:path';
import t from 'tap';
import {
  ClientError,
  commandArgs,
  commandLine,
  commandResult,
  exitCodeOf,
  NO_EXIT_CODE,
  shellQuote,
  TIMEOUT_EXIT_CODE,
  workspacePath,
} from '../../src/client/computesdk/index.js';
import type { ExecPayload } from '../../src/contract/index.js';
import { importClosure } from '../support/import-closure.js';
import { REPO_ROOT } from '../support/readme.js';

/**
 * The ComputeSDK provider's pure parts: ComputeSDK paths as workspace paths, command
 * lines quoted word by word, a command's options as `exec` arguments and its answer as
 * ComputeSDK's result; and the client's door, which the CLI and the MCP server load,
 * reaches no ComputeSDK package.
 */

t.test(
  'a ComputeSDK path is a workspace path, or invalid_path outside the workspace',
  async (t) => {
    const cases: [string, string][] = [
      ['notes.txt', 'notes.txt'],
      ['a/b/c.txt', 'a/b/c.txt'],
      ['', '.'],
      ['.', '.'],
      ['/workspace', '.'],
      ['/workspace/', '.'],
      ['/workspace/a/b.txt', 'a/b.txt'],
      ['/workspace//a/', 'a'],
    ];
    for (const [given, expected] of cases) t.equal(workspacePath(given), expected, given);
    for (const outside of ['/', '/tmp/x', '/etc/passwd', '/workspaces/a', '/workspacex']) {
      t.throws(
        () => workspacePath(outside),
        { name: 'ClientError', code: 'invalid_path' },
        outside,
      );
    }
    let err: unknown;
    try {
      workspacePath('/tmp/x');
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ClientError);
    t.same((err as ClientError).payload, { path: '/tmp/x' });
  },
);

t.test('a command line quotes every word that the shell would read', async (t) => {
  t.equal(shellQuote('plain-word_1.txt'), 'plain-word_1.txt');
  t.equal(shellQuote('two words'), "'two words'");
  t.equal(shellQuote("it's"), "'it'\\''s'");
  t.equal(shellQuote('$HOME;rm -rf /'), "'$HOME;rm -rf /'");
  t.equal(shellQuote(''), "''");
  t.equal(commandLine(['ls', '-la', 'my dir']), "ls -la 'my dir'");
  t.throws(() => commandLine([]), { code: 'invalid_arguments' });
});

t.test("a command's options are exec's arguments", async (t) => {
  t.same(commandArgs('node -v'), { command: 'node -v' });
  t.same(
    commandArgs('ls', {
      cwd: '/workspace/src',
      env: { A: '1' },
      timeout: 5_000,
      background: false,
    }),
    { command: 'ls', cwd: 'src', env: { A: '1' }, timeoutMs: 5_000 },
  );
  t.throws(() => commandArgs('ls', { cwd: '/tmp' }), { code: 'invalid_path' });
});

const ended: ExecPayload = {
  commandId: 'cmd-1',
  status: 'completed',
  exitCode: 0,
  signal: null,
  timedOut: false,
  cancelled: false,
  oomKilled: false,
  stdout: 'v20.0.0\n',
  stderr: '',
  stdoutTruncated: false,
  stderrTruncated: false,
  durationMs: 12,
};

t.test("an exec answer is ComputeSDK's result", async (t) => {
  t.same(commandResult(ended, 40), {
    stdout: 'v20.0.0\n',
    stderr: '',
    exitCode: 0,
    durationMs: 12,
  });
  const binary = {
    ...ended,
    stdout: Buffer.from('héllo').toString('base64'),
    stdoutEncoding: 'base64' as const,
  };
  t.equal(commandResult(binary, 1).stdout, 'héllo', 'base64 output decoded');
  t.equal(commandResult({ ...ended, durationMs: null }, 40).durationMs, 40, 'never ran: elapsed');
  t.equal(exitCodeOf({ ...ended, exitCode: 3 }), 3);
  t.equal(
    exitCodeOf({
      ...ended,
      status: 'timed_out',
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: true,
    }),
    TIMEOUT_EXIT_CODE,
  );
  t.equal(exitCodeOf({ ...ended, exitCode: null, signal: 'SIGKILL' }), 137, '128 + 9');
  t.equal(exitCodeOf({ ...ended, exitCode: null, signal: 'SIGTERM' }), 143, '128 + 15');
  t.equal(
    exitCodeOf({ ...ended, status: 'cancelled', exitCode: null, cancelled: true }),
    NO_EXIT_CODE,
  );
});

t.test("the client's door loads no ComputeSDK package; the provider's room does", async (t) => {
  const computeSdk = (pkg: string) => pkg === 'computesdk' || pkg.startsWith('@computesdk/');
  const door = importClosure(join(REPO_ROOT, 'src/client/index.ts'), '.ts');
  t.same(
    door.packages.filter((p) => computeSdk(p.pkg)).map((p) => `${p.from}: ${p.spec}`),
    [],
    'the CLI and the MCP server import the client door',
  );
  const room = importClosure(join(REPO_ROOT, 'src/client/computesdk/index.ts'), '.ts');
  t.ok(
    room.packages.some((p) => p.pkg === '@computesdk/provider'),
    'the walk sees the provider',
  );
});
