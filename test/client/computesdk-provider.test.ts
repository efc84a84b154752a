import { compute } from 'computesdk';
import t from 'tap';
import { memqlWorkbench, PROVIDER_NAME } from '../../src/client/computesdk/index.js';
import { ClientError, WorkbenchClient } from '../../src/client/index.js';
import { isRunId } from '../../src/contract/index.js';
import { servingLocalNode } from '../support/local-node.js';

/**
 * The ComputeSDK provider against a real local node (as `npm start` runs it, on a
 * temporary data directory, the bwrap runner), driven through ComputeSDK's own client:
 * `compute({ provider })`, its sandboxes, their commands and filesystem. What each call
 * did is checked on the node through the workbench's own client.
 */

t.setTimeout(300_000);

const { node, banner } = await servingLocalNode(t, 'memql-computesdk-node-');
const { baseUrl, token } = banner;

const client = new WorkbenchClient({ baseUrl, token });
const sdk = compute({ provider: memqlWorkbench({ baseUrl, token }) });

/** The code a rejected call threw. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ClientError) return err.code;
    throw err;
  }
  throw new Error('the call did not fail');
}

t.test('a sandbox is a run: create, commands, files, get, list, destroy', async (t) => {
  const sandbox = await sdk.sandbox.create();
  const id = sandbox.sandboxId;
  t.ok(isRunId(id), `the sandbox id ${id} is a run id`);
  t.equal(sandbox.provider, PROVIDER_NAME);
  t.equal((await client.getRun(id)).status, 'running', 'the node has the run, running');

  const version = await sandbox.runCommand('node -v');
  t.equal(version.exitCode, 0, version.stderr);
  t.match(version.stdout, /^v\d+\.\d+\.\d+\n$/, 'node -v ran in the sandbox');
  t.equal(version.stderr, '');
  t.ok(version.durationMs >= 0, 'a duration');

  const echoed = await sandbox.runCommand("echo 'hello, workbench'");
  t.same(
    { stdout: echoed.stdout, stderr: echoed.stderr, exitCode: echoed.exitCode },
    { stdout: 'hello, workbench\n', stderr: '', exitCode: 0 },
  );

  const env = await sandbox.runCommand('printenv GREETING', { env: { GREETING: 'hi there' } });
  t.equal(env.stdout, 'hi there\n', 'env reaches the command');

  const failed = await sandbox.runCommand('ls no-such-file');
  t.not(failed.exitCode, 0, 'a non-zero exit is a result');
  t.match(failed.stderr, /no-such-file/);

  t.equal(await codeOf(sandbox.runCommand('sudo ls')), 'command_not_allowed', 'refused: thrown');

  const chunks = { stdout: '', stderr: '' };
  const streamed = await sandbox.runCommand('echo out; echo err >&2', {
    onStdout: (text) => {
      chunks.stdout += text;
    },
    onStderr: (text) => {
      chunks.stderr += text;
    },
  });
  t.same(chunks, { stdout: 'out\n', stderr: 'err\n' }, 'output streamed to the callbacks');
  t.same([streamed.stdout, streamed.stderr, streamed.exitCode], ['out\n', 'err\n', 0]);

  // The filesystem: absolute paths under /workspace and relative ones are the same files.
  const fs = sandbox.filesystem;
  await fs.writeFile('/workspace/notes/hello.txt', 'héllo\n');
  t.equal(await fs.readFile('notes/hello.txt'), 'héllo\n', 'read back what was written');
  const read = await client.dispatch({
    action: 'fs_read',
    args: { path: 'notes/hello.txt' },
    runId: id,
    agentId: 'test',
    taskId: 'test',
  });
  t.match(read, { ok: true, payload: { content: 'héllo\n', size: 7 } }, 'in the run workspace');
  const listed = await fs.readdir('/workspace/notes');
  t.same(
    listed.map((e) => ({ name: e.name, type: e.type, size: e.size })),
    [{ name: 'hello.txt', type: 'file', size: 7 }],
  );
  t.ok(listed[0]?.modified instanceof Date);
  t.equal(
    (await sandbox.runCommand('cat hello.txt', { cwd: '/workspace/notes' })).stdout,
    'héllo\n',
  );

  t.equal(await fs.exists('notes/hello.txt'), true, 'a file exists');
  t.equal(await fs.exists('/workspace/notes'), true, 'a directory exists');
  t.equal(await fs.exists('notes/missing.txt'), false);
  t.equal(await fs.exists('missing/deeper.txt'), false);

  await fs.mkdir('/workspace/made/deep');
  t.equal(await fs.exists('made/deep'), true, 'mkdir made the directory');
  t.same(
    (await fs.readdir('made')).map((e) => [e.name, e.type]),
    [['deep', 'directory']],
  );

  await fs.remove('notes');
  t.equal(await fs.exists('notes/hello.txt'), false, 'removed with its tree');
  t.equal(await fs.exists('notes'), false);
  await fs.remove('notes'); // as rm -rf: nothing there is no error
  t.equal(await codeOf(fs.readFile('notes/hello.txt')), 'path_not_found');
  t.equal(await codeOf(fs.readFile('/etc/passwd')), 'invalid_path', 'outside the workspace');

  // Found again by id and in the list.
  const again = await sdk.sandbox.getById(id);
  t.equal(again?.sandboxId, id);
  t.equal((await again!.runCommand('ls')).stdout, 'made\n', 'the same workspace');
  const info = await again!.getInfo();
  t.match(info, { id, provider: PROVIDER_NAME, status: 'running' });
  t.ok(info.createdAt instanceof Date);
  t.equal(
    await again!.getUrl({ port: 8000 }),
    `${baseUrl}/v1/runs/${id}/ports/8000/`,
    'a port through the port route',
  );
  t.ok(
    (await sdk.sandbox.list()).some((s) => s.sandboxId === id),
    'the running sandbox is listed',
  );

  await sdk.sandbox.destroy(id);
  t.equal(await sdk.sandbox.getById(id), null, 'gone after destroy');
  t.equal(await codeOf(client.getRun(id)), 'not_found', 'the run is deleted on the node');
  t.notOk(
    (await sdk.sandbox.list()).some((s) => s.sandboxId === id),
    'no longer listed',
  );
  await sdk.sandbox.destroy(id); // a repeat is harmless
});

t.test('an ended run is listed no more, and destroy deletes it', async (t) => {
  const sandbox = await sdk.sandbox.create();
  await client.endRun(sandbox.sandboxId, 'failed');
  t.notOk((await sdk.sandbox.list()).some((s) => s.sandboxId === sandbox.sandboxId));
  t.match(await sandbox.getInfo(), { status: 'stopped' });
  t.equal(await codeOf(sandbox.runCommand('echo late')), 'run_ended');
  await sandbox.destroy();
  t.equal(await codeOf(client.getRun(sandbox.sandboxId)), 'not_found');
});

t.test('an id that names no run is no sandbox', async (t) => {
  t.equal(await sdk.sandbox.getById('run-00000000-0000-4000-8000-000000000000'), null);
  t.equal(await sdk.sandbox.getById('not a run id'), null);
});

t.test('a wrong token is refused with its code', async (t) => {
  const wrong = compute({ provider: memqlWorkbench({ baseUrl, token: 'mqt_wrong' }) });
  await t.rejects(wrong.sandbox.list(), { code: 'unauthenticated' });
  // compute() wraps a failed create in its own error unless it may not fall back.
  const strict = compute({
    provider: memqlWorkbench({ baseUrl, token: 'mqt_wrong' }),
    fallbackOnError: false,
  });
  await t.rejects(strict.sandbox.create(), { code: 'unauthenticated' });
});

t.test('the node stops cleanly', async (t) => {
  t.equal((await node.stop('SIGINT', 30_000)).code, 0, 'the node exits 0 on SIGINT');
});
