import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { eventually } from '../support/mesh.js';
import { NodeProcess, nodeMain } from '../support/node-process.js';
import { codeBlocks, docSection, readmeSection } from '../support/readme.js';

/**
 * The README followed literally against a real local node (`node
 * dist/nodes/local/main.js`, as `npm start` runs it, on the bwrap runner): the
 * quickstart's shell block with curl, the same flow through the `memql` CLI, and the
 * tool-loop example. The node is stopped with SIGINT at the end and must exit 0.
 */

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOT = resolve(DIST, '..');
const CLI = resolve(DIST, 'nodes/cli/main.js');
const PATH = process.env.PATH ?? '/usr/bin:/bin';

const cwd = await mkdtemp(join(tmpdir(), 'memql-quickstart-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
// bwrap runs commands as uid 10001: the workspace's parent directories must be searchable.
await chmod(cwd, 0o755);

// The local node, exactly as `npm start` runs it after building, on a free port.
const child = spawn(process.execPath, ['--enable-source-maps', nodeMain('local')], {
  cwd,
  env: { PATH, MEMQL_HTTP_LISTEN: '127.0.0.1:0' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const node = new NodeProcess('local', child);
t.teardown(async () => {
  if (!node.alive) return;
  child.kill('SIGKILL');
  await node.exited;
  throw new Error('the local node was left running at the end of the test');
});

/** Waits for the node's "ready." line and reads the API address and token it printed. */
async function printedAddress(): Promise<{ url: string; token: string }> {
  await node.waitFor(
    () => node.other.find((l) => l.startsWith('ready.')),
    'the "ready." line',
    90_000,
  );
  const apiLine = node.other.find((l) => /\bAPI\b/.test(l) && l.includes('http://'));
  const tokenLine = node.other.find((l) => /^\s*token:/.test(l));
  const url = apiLine?.match(/http:\/\/\S+/)?.[0].replace(/\/v1\/?$/, '');
  const token = tokenLine?.match(/token:\s*(\S+)/)?.[1];
  if (!url || !token) throw new Error(`no API address or token in: ${node.other.join('\n')}`);
  return { url, token };
}

const { url, token } = await printedAddress();
const client = new WorkbenchClient({ baseUrl: url, token });

interface Exit {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Waits for a child to exit, collecting its output. */
function collect(proc: ChildProcess): Promise<Exit> {
  const out: Buffer[] = [];
  let stderr = '';
  proc.stdout?.on('data', (c: Buffer) => out.push(c));
  proc.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((done) =>
    proc.on('close', (code) => done({ code, stdout: Buffer.concat(out), stderr })),
  );
}

/** Runs `memql args...` with the printed address and token in its environment. */
function memql(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  const proc = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH, MEMQL_URL: url, MEMQL_TOKEN: token, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(proc);
}

/** `memql args...` with `input` on its stdin. */
function memqlWithStdin(args: string[], input: string | Buffer): Promise<Exit> {
  const proc = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH, MEMQL_URL: url, MEMQL_TOKEN: token },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  proc.stdin.end(input);
  return collect(proc);
}

t.test('the curl quickstart (docs/quickstart.md), run as written', async (t) => {
  const blocks = codeBlocks(docSection('quickstart.md', 'Quickstart'), 'sh');
  t.ok(
    blocks.some((b) => b.includes('npm start')),
    'the quickstart starts the node with npm start (this test runs what it runs)',
  );
  const vars = blocks.find((b) => /export TOKEN=/.test(b));
  const steps = blocks.filter((b) => b !== vars && !b.includes('npm start'));
  if (vars === undefined || steps.length === 0) throw new Error('quickstart blocks not found');
  // The one substitution: the values the reader pastes from what npm start printed.
  const filled = vars
    .replace(/^export MEMQL_URL=.*$/m, `export MEMQL_URL=${url}`)
    .replace(/^export TOKEN=.*$/m, `export TOKEN=${token}`);
  t.not(filled, vars, 'the variables block names MEMQL_URL and TOKEN');

  const dir = await mkdtemp(join(tmpdir(), 'memql-readme-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const script = [filled, ...steps].join('\n');
  const run = await collect(
    spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      env: { PATH, HOME: dir },
      // stdin must not be a socket: bash would then read /etc/bash.bashrc as if run by sshd.
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const stdout = run.stdout.toString();
  t.equal(run.code, 0, `the block runs cleanly (stderr: ${run.stderr})`);
  t.notMatch(stdout, /"ok": false/, 'no call was refused');

  // The file written by fs_write comes back, byte for byte, as the downloaded artifact.
  const written = JSON.parse(
    `"${/"content":"((?:[^"\\]|\\.)*)"/.exec(steps.join('\n'))?.[1] ?? ''}"`,
  ) as string;
  t.ok(written.length > 0, 'the quickstart writes some content');
  const downloadTo = /-o (\S+)/.exec(steps.join('\n'))?.[1] ?? 'missing';
  t.same(await readFile(join(dir, downloadTo)), Buffer.from(written, 'utf8'));

  const runId = /run: (\S+)/.exec(stdout)?.[1] ?? 'missing';
  t.equal((await client.getRun(runId)).status, 'succeeded', 'the run is finished');
  const [artifact] = await client.listArtifacts({ runId });
  t.equal(artifact?.size, Buffer.byteLength(written), 'the artifact outlives the run');
});

t.test('the same flow through the memql CLI', async (t) => {
  const created = await memql(['runs', 'create']);
  t.equal(created.code, 0, created.stderr);
  const runId = created.stdout.toString().trim();
  t.match(runId, /^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'runs create prints just the run id');

  // 2.5 MiB of random bytes: more than one 1 MiB call each way.
  const bytes = randomBytes(2.5 * 1024 * 1024);
  const source = join(cwd, 'source.bin');
  await writeFile(source, bytes);
  const wrote = await memql(['fs', 'write', runId, 'data/blob.bin', '--from', source]);
  t.equal(wrote.code, 0, wrote.stderr);
  t.match(wrote.stdout.toString(), 'wrote 2.5 MiB to data/blob.bin');

  const exit3 = await memql(['exec', runId, '--', 'echo out; echo err >&2; exit 3']);
  t.equal(exit3.code, 3, 'memql exec exits with the command exit code');
  t.equal(exit3.stdout.toString(), 'out\n', 'stdout streamed to stdout');
  t.equal(exit3.stderr, 'err\n', 'stderr streamed to stderr');

  const sum = await memql(['exec', runId, '--', 'sha256sum data/blob.bin']);
  t.equal(sum.code, 0);
  t.match(sum.stdout.toString(), /^[0-9a-f]{64} {2}data\/blob\.bin/);

  const timedOut = await memql(['exec', runId, '--timeout-ms', '500', '--', 'sleep 10']);
  t.equal(timedOut.code, 124, 'a timed-out command exits 124');
  t.match(timedOut.stderr, 'timed out');

  const commands = await memql(['--json', 'commands', 'list', runId, '--limit', '2']);
  t.equal(commands.code, 0, commands.stderr);
  const page = JSON.parse(commands.stdout.toString()) as {
    commands: { status: string; stdout?: string }[];
    nextBefore: string | null;
  };
  t.same(
    page.commands.map((c) => c.status),
    ['timed_out', 'completed'],
    'commands list: newest first',
  );
  t.ok(page.nextBefore, 'and a next page');
  t.notOk('stdout' in (page.commands[0] ?? {}), 'without output');
  const older = await memql(['commands', 'list', runId, '--before', String(page.nextBefore)]);
  t.equal(older.code, 0, older.stderr);
  t.match(
    older.stdout.toString(),
    /^ID +CALL +STATUS +EXIT +DURATION +QUEUED\n\S+ +- +completed +3 /,
  );

  // Several words after -- are the argv itself: the sandbox gets each word whole.
  const argv = await memql(['exec', runId, '--', 'printf', '[%s]\\n', 'a b', "it's", '$HOME;x']);
  t.equal(argv.code, 0, argv.stderr);
  t.equal(
    argv.stdout.toString(),
    "[a b]\n[it's]\n[$HOME;x]\n",
    'each word reached printf as it was',
  );

  const fed = await memqlWithStdin(['exec', runId, '--', 'wc', '-c'], 'piped in\n');
  t.equal(fed.code, 0, fed.stderr);
  t.equal(fed.stdout.toString().trim(), '9', 'what is piped to memql exec is the command stdin');
  const binary = await memqlWithStdin(
    ['exec', runId, '--', 'cat'],
    Buffer.from([0xff, 0xfe, 0x00]),
  );
  t.equal(binary.code, 1, 'stdin that is not UTF-8 is refused, not mangled');
  t.match(
    binary.stderr,
    /^error: invalid_arguments: the standard input piped to memql exec is not UTF-8/,
  );

  const refused = await memql(['exec', runId, '--', 'bash -c true']);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /^error: command_not_allowed: .*\nhint: /);

  const listing = await memql(['fs', 'ls', runId, '-r']);
  t.equal(listing.code, 0);
  t.match(listing.stdout.toString(), /^d +data\/\n- +2621440 {2}data\/blob\.bin\n$/);

  const readBack = join(cwd, 'read-back.bin');
  const read = await memql(['fs', 'read', runId, 'data/blob.bin', '--out', readBack]);
  t.equal(read.code, 0, read.stderr);
  t.ok((await readFile(readBack)).equals(bytes), 'fs read returns the bytes written');

  const promoted = await memql(['promote', runId, 'data/blob.bin', '--name', 'blob.bin']);
  t.equal(promoted.code, 0, promoted.stderr);
  const artifactId = promoted.stdout.toString().trim();

  const listed = await memql(['--json', 'artifacts', 'list', '--run', runId]);
  const artifacts = JSON.parse(listed.stdout.toString()).artifacts as { id: string }[];
  t.same(
    artifacts.map((a) => a.id),
    [artifactId],
  );

  const downloaded = join(cwd, 'downloaded.bin');
  const got = await memql(['artifacts', 'download', artifactId, '--out', downloaded, '--progress']);
  t.equal(got.code, 0, got.stderr);
  t.ok((await readFile(downloaded)).equals(bytes), 'the artifact is byte for byte the file');
  t.match(got.stderr, '2.5 MiB / 2.5 MiB  100%', 'progress on stderr');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  t.match(got.stdout.toString(), `sha256 ${sha256}`, 'the CLI reports the hash of what it wrote');
  t.match(await client.getArtifact(artifactId), { name: 'blob.bin', size: bytes.length, sha256 });

  const piped = await memqlWithStdin(
    ['fs', 'write', runId, 'notes/piped.txt', '--from', '-'],
    'from stdin\n',
  );
  t.equal(piped.code, 0, piped.stderr);
  const cat = await memql(['fs', 'read', runId, 'notes/piped.txt']);
  t.equal(cat.stdout.toString(), 'from stdin\n', 'fs read prints the file to stdout');

  const asJson = await memql(['--json', 'exec', runId, '--', 'echo quiet; exit 7']);
  t.equal(asJson.code, 7, '--json keeps the exit code');
  t.match(JSON.parse(asJson.stdout.toString()), {
    status: 'completed',
    exitCode: 7,
    stdout: 'quiet\n',
  });

  const ended = await memql(['runs', 'end', runId, 'succeeded']);
  t.equal(ended.code, 0, ended.stderr);
  const all = await memql(['workspaces', '--all']);
  t.match(all.stdout.toString(), new RegExp(`${runId} .* released +run_succeeded`));
  const after = await memql(['exec', runId, '--', 'true']);
  t.equal(after.code, 1);
  t.match(after.stderr, 'error: run_ended:');
});

t.test('Ctrl-C during memql exec cancels the command on the node', async (t) => {
  const runId = (await memql(['runs', 'create'])).stdout.toString().trim();
  const proc = spawn(
    process.execPath,
    [CLI, 'exec', runId, '--', 'echo started; sleep 3; echo late > marker.txt'],
    { cwd, env: { PATH, MEMQL_URL: url, MEMQL_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = collect(proc);
  const started = await Promise.race([
    new Promise<true>((ok) =>
      proc.stdout.on('data', (c: Buffer) => c.toString().includes('started') && ok(true)),
    ),
    exited.then(() => false),
  ]);
  t.ok(started, 'the command started and its output arrived live');
  proc.kill('SIGINT');
  const exit = await exited;
  t.equal(exit.code, 130, 'exit code 130');
  t.match(exit.stderr, 'cancelled');
  // The node records the cancel once the runner has returned, and the runner returns
  // only after killing the command's whole process tree: from then on nothing of it runs.
  let commandId = '';
  await eventually('the command is recorded ended', async () => {
    const [summary] = (await client.listCommands(runId)).commands;
    commandId = summary?.id ?? '';
    return summary !== undefined && summary.status !== 'queued' && summary.status !== 'running';
  });
  const command = await client.getCommand(commandId);
  t.equal(command.status, 'cancelled', 'the node cancelled the command');
  t.equal(command.stdout, 'started\n', 'the runner returned the output it had before the kill');
  const listing = await memql(['fs', 'ls', runId]);
  t.notMatch(listing.stdout.toString(), 'marker.txt', 'the command was killed before it wrote');
});

t.test('errors print their code and a hint; usage errors exit 2', async (t) => {
  const badToken = await memql(['workspaces'], { MEMQL_TOKEN: 'not-a-token' });
  t.equal(badToken.code, 1);
  t.match(badToken.stderr, /^error: unauthenticated: .*\nhint: .*MEMQL_TOKEN/);
  const missing = await memql(['runs', 'get', 'no-such-run']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, 'error: not_found:');
  const usage = await memql(['runs', 'end', 'x', 'finished']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, 'error: usage: runs end: status must be');
  // A reader that goes away ends memql as SIGPIPE would, not with a crash.
  const runId = (await memql(['runs', 'create'])).stdout.toString().trim();
  const proc = spawn(process.execPath, [CLI, 'exec', runId, '--', 'seq 1 500000'], {
    cwd,
    env: { PATH, MEMQL_URL: url, MEMQL_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout.once('data', () => proc.stdout.destroy());
  const piped = await collect(proc);
  t.equal(piped.code, 141, 'a closed stdout exits 141');
  t.equal(piped.stderr, '', 'quietly');

  const help = await memql(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout.toString(), 'memql exec <runId>');
  const bare = await memql([]);
  t.equal(bare.code, 2, 'memql with no command is a usage error');
  t.match(bare.stderr, 'memql exec <runId>', 'and prints the usage on stderr');
});

t.test('the README quickstart, run as written with memql', async (t) => {
  const block = codeBlocks(readmeSection('Quickstart'), 'sh').find((b) => b.includes('export'));
  if (block === undefined) throw new Error('the README quickstart has no memql block');
  // The substitutions: what the reader pastes from npm start, and where the CLI is (the
  // block runs from the checkout; this test runs it in a directory of its own).
  const filled = block
    .replace(/^export MEMQL_URL=.*$/m, `export MEMQL_URL=${url} MEMQL_TOKEN=${token}`)
    .replace(/^memql\(\) \{ node dist\/nodes\/cli\/main\.js /m, `memql() { node ${CLI} `);
  t.not(filled, block, 'the block names MEMQL_URL and MEMQL_TOKEN');
  t.match(filled, CLI, 'and runs the CLI from the checkout');
  t.ok(block.split('\n').filter((l) => l.trim() !== '').length <= 10, 'ten lines at most');
  const dir = await mkdtemp(join(tmpdir(), 'memql-readme-cli-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const run = await collect(
    spawn('bash', ['-euo', 'pipefail', '-c', filled], {
      cwd: dir,
      env: { PATH, HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const stdout = run.stdout.toString();
  t.equal(run.code, 0, `the block runs cleanly (stderr: ${run.stderr})`);
  t.match(stdout, /^17 hello\.txt$/m, 'the command ran in the sandbox');
  t.match(stdout, 'hello, workbench', 'the artifact came back');
  t.match(stdout, /^VERSION\s+CREATED\s+MADE BY/m, 'the versions listed');
  t.equal(await readFile(join(dir, 'hello-copy.txt'), 'utf8'), 'hello, workbench\n');
});

t.test('memql exec --needs on a node that takes no worker hosts says how to get one', async (t) => {
  const run = (await client.createRun()).id;
  const needs = await memql(['exec', run, '--needs', 'display', '--', 'xclock']);
  t.equal(needs.code, 1);
  t.match(needs.stderr, /environment_mismatch: this workbench cannot provide display/);
  t.match(needs.stderr, 'memql worker', 'names the worker host');
  t.match(needs.stderr, 'MEMQL_GRPC_LISTEN', 'and the setting that lets the node take one');
});

t.test('the tool loop (docs/tool-loop.md) runs against the node', async (t) => {
  const [code] = codeBlocks(docSection('tool-loop.md', 'Tool loop'), 'js');
  if (code === undefined) throw new Error('no js block in the Tool loop section');
  t.match(code, "from 'memql-workbench/client'");
  // A project of the user's own that installed this package (npm install /path links
  // it the same way), running the block as written with plain node.
  const dir = await mkdtemp(join(tmpdir(), 'memql-tool-loop-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'node_modules'));
  await symlink(ROOT, join(dir, 'node_modules', 'memql-workbench'), 'dir');
  const js = code;
  await writeFile(join(dir, 'tool-loop.mjs'), js);
  const run = await collect(
    spawn(process.execPath, [join(dir, 'tool-loop.mjs')], {
      cwd: dir,
      env: { PATH, MEMQL_URL: url, MEMQL_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  t.equal(run.code, 0, run.stderr);
  t.equal(
    run.stdout.toString(),
    [
      'call_1 fs_write ok',
      'call_2 exec ok',
      'call_3 fs_read path_not_found',
      'call_4 promote_artifact ok',
      'artifacts: report.md',
      '',
    ].join('\n'),
  );
});

t.test('Ctrl-C stops the local node cleanly', async (t) => {
  // Errors the node logged (a sandbox that would not start, say) explain failures above.
  for (const line of node.lines.filter((l) => l.level >= 50)) t.comment(JSON.stringify(line));
  const exit = await node.stop('SIGINT', 30_000);
  t.equal(exit.code, 0);
});
