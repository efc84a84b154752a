/**
 * The agent of a warm bwrap sandbox (see `bwrap-session.ts`): a small Perl program,
 * `session-agent.pl` beside this module, that bwrap starts instead of a command and that
 * then runs one command at a time, each as its child, on the node's request, and hosts
 * the run's background processes and the connections to its ports. What it does, its
 * wire and its exit codes are described at the top of that file; the node's side of
 * the wire is `agent-requests.ts` and `agent-events.ts`.
 *
 * The program is not compiled in: the build copies it beside the compiled module
 * (`scripts/copy-assets.mjs`), and it is read from there once, the first time a warm
 * sandbox starts, and handed to the interpreter as `perl -e`, since the sandbox sees no
 * path of the node's.
 *
 * @module
 */

import { readFileSync } from 'node:fs';

/** The descriptors the agent talks to the node on (beyond bwrap's own, see `BWRAP_FDS`). */
export const AGENT_FDS = { requests: 10, events: 11 } as const;

/** Where the agent's interpreter is, inside the sandbox as on the host. */
export const AGENT_INTERPRETER = '/usr/bin/perl';

/** Largest output piece the agent sends in one frame. */
export const AGENT_CHUNK_BYTES = 65536;

/**
 * Seconds the rest of a background process's session gets after its leader ended (the
 * shell `sh -c` ran, say, which a `SIGTERM` ends first): `SIGTERM` at once, `SIGKILL`
 * after this.
 */
export const LEFTOVER_GRACE_S = 2;

/** The agent's program: `session-agent.pl`, beside this module in `src/` and in `dist/`. */
export const AGENT_PROGRAM_URL = new URL('./session-agent.pl', import.meta.url);

let program: string | undefined;

/** The agent's program text, read once. Throws, naming the file, when the build left it out. */
export function agentProgram(): string {
  if (program === undefined) {
    try {
      program = readFileSync(AGENT_PROGRAM_URL, 'utf8');
    } catch (err) {
      throw new Error(
        `the warm sandbox's agent program is missing at ${AGENT_PROGRAM_URL.pathname} (${(err as Error).message}); the build copies it there: npm run build`,
      );
    }
  }
  return program;
}

/**
 * The command line (`sh -c` text) that runs the agent in place of a command: the
 * program, then its arguments (the descriptors, the chunk size, the leftovers' grace).
 */
export function agentCommand(): string {
  const args = [AGENT_FDS.requests, AGENT_FDS.events, AGENT_CHUNK_BYTES, LEFTOVER_GRACE_S];
  return `exec ${AGENT_INTERPRETER} -e '${agentProgram().replaceAll("'", `'\\''`)}' ${args.join(' ')}`;
}
