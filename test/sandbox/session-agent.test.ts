import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { type AgentEvent, AgentEventReader } from '../../src/sandbox/bwrap/agent-events.js';
import {
  AGENT_FDS,
  AGENT_INTERPRETER,
  AGENT_PROGRAM_URL,
  agentCommand,
  agentProgram,
} from '../../src/sandbox/bwrap/session-agent.js';

/**
 * The warm sandbox's agent as a Perl program of its own (`session-agent.pl`): Perl
 * compiles it, the build put the source's copy beside the compiled module, and the
 * command line the node starts it with hands it its arguments. Outside a sandbox the
 * agent is only ever told nothing and then let go: a command's end kills every process
 * it may signal, which only a sandbox bounds. What it does with commands is tested
 * under bubblewrap (bwrap-warm, bwrap-processes).
 */

const SOURCE = fileURLToPath(
  new URL('../../../src/sandbox/bwrap/session-agent.pl', import.meta.url),
);

t.test('Perl compiles the program the compiled code reads', async (t) => {
  const check = spawnSync(AGENT_INTERPRETER, ['-c', fileURLToPath(AGENT_PROGRAM_URL)], {
    encoding: 'utf8',
  });
  t.equal(check.status, 0, check.stderr);
  t.match(check.stderr, /syntax OK/);
});

t.test('the build put the source program beside the compiled module, unchanged', async (t) => {
  t.ok(fileURLToPath(AGENT_PROGRAM_URL).includes('/dist/'), 'read from the compiled tree');
  t.equal(agentProgram(), readFileSync(SOURCE, 'utf8'));
});

t.test(
  'started as the node starts it, the agent is ready and leaves when told nothing',
  async (t) => {
    const child = spawn('/bin/sh', ['-c', agentCommand()], {
      env: {},
      stdio: Array.from({ length: AGENT_FDS.events + 1 }, () => 'pipe' as const),
    });
    const fds = child.stdio as unknown as (Readable & Writable)[];
    const reader = new AgentEventReader();
    const first = await new Promise<AgentEvent | undefined>((resolve) => {
      fds[AGENT_FDS.events]!.on('data', (chunk: Buffer) => resolve(reader.push(chunk)[0]));
      child.once('exit', () => resolve(undefined));
    });
    t.same(first, { kind: 'ready' });
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    fds[AGENT_FDS.requests]!.end();
    t.equal(await exit, 0, 'the end of its requests ends it');
  },
);

t.test('without its arguments the agent stops before doing anything', async (t) => {
  const run = spawnSync(AGENT_INTERPRETER, ['-e', agentProgram()], { env: {} });
  t.equal(run.status, 120);
  const wrong = spawnSync(AGENT_INTERPRETER, ['-e', agentProgram(), '10', '11', 'x', '2'], {
    env: {},
  });
  t.equal(wrong.status, 120);
});
