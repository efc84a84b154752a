import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';
import { eventually } from '../support/mesh.js';
import { killAll, leftovers, markedSleep } from './sandbox-support.js';

/**
 * A node SIGKILLed while a command starts leaves nothing of the sandbox running, at any
 * step: the launcher, the workspace staging, bwrap's setup (before bwrap arms its own
 * --die-with-parent), or once the command runs. Real node processes, real bwrap; the
 * kill lands at a spread of moments after the node is ready, then once the command has
 * surely started.
 */

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/one-command.js');

/** Starts the fixture node; resolves once it is about to run `command`. */
async function startNode(workspaceDir: string, command: string) {
  const child = spawn(process.execPath, [FIXTURE, workspaceDir, command], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8');
  let out = '';
  child.stdout.on('data', (chunk: string) => {
    out += chunk;
  });
  while (!out.includes('ready\n')) {
    if (child.exitCode !== null) throw new Error(`the node exited ${child.exitCode} before ready`);
    await once(child.stdout, 'data');
  }
  return child;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

const DELAYS_MS = [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 35, 40, 50];

t.test('a node killed at any moment of a start leaves no sandbox process', async (t) => {
  // A parent of its own: a node killed while staging leaves its scratch directory beside
  // the workspace, and this one goes at teardown.
  const parent = await mkdtemp(join(tmpdir(), 'memql-node-death-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  await chmod(parent, 0o755);
  const ws = join(parent, 'run-1');
  await mkdir(ws);
  await chown(ws, SANDBOX_UID, SANDBOX_UID);
  for (const delay of [...DELAYS_MS, 'started'] as const) {
    const duration = markedSleep(600);
    const flag = `started-${duration}`;
    const node = await startNode(ws, `touch ${flag}; sleep ${duration}`);
    if (delay === 'started') {
      await eventually('the command started', () => exists(join(ws, flag)), 60_000, 10);
    } else {
      // Not a wait for anything: the kill is meant to land this long after ready, so the
      // spread of delays hits each step of a start (the assertion holds at any moment).
      await sleep(delay);
    }
    node.kill('SIGKILL');
    await once(node, 'exit');
    const left = await leftovers(duration, 10_000);
    killAll(left);
    t.same(
      left,
      [],
      `killed ${delay === 'started' ? 'once the command ran' : `${delay} ms after ready`}`,
    );
  }
});
