#!/usr/bin/env node
/**
 * `memql`: the command line of the agent node's HTTP API. Wiring only: parse the
 * arguments and environment, build the client, run the command, exit with its code.
 * Ctrl-C aborts the request in flight, which cancels a running `exec`. `memql worker`
 * runs the worker host (`nodes/worker/main.ts`) in this process instead.
 */
import { WorkbenchClient } from '../../src/client/index.js';
import { connection, parseCli, UsageError } from './cli-args.js';
import { runCli } from './cli-commands.js';
import { EXIT_BROKEN_PIPE, USAGE } from './cli-output.js';

async function main(): Promise<number> {
  if (process.argv[2] === 'worker') {
    // The worker host is its own process: it reads MEMQL_WORKER_* (not --url/--token),
    // runs until a signal, and exits with its own code.
    process.argv.splice(2, 1);
    await import('../worker/main.js');
    return new Promise<number>(() => {});
  }
  let invocation: ReturnType<typeof parseCli>;
  let target: ReturnType<typeof connection>;
  try {
    invocation = parseCli(process.argv.slice(2), process.env);
    if (invocation.command.kind === 'help') {
      // `memql` with no command is a usage error: the usage goes to stderr, exit 2.
      if (invocation.command.missingCommand) {
        process.stderr.write(USAGE);
        return 2;
      }
      process.stdout.write(USAGE);
      return 0;
    }
    target = connection(invocation.global);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: usage: ${err.message}\nrun "memql --help" for the commands\n`);
    return 2;
  }
  const client = new WorkbenchClient(target);
  const abort = new AbortController();
  const onSigint = () => {
    // A second Ctrl-C leaves without waiting for the cancellation to be confirmed.
    if (abort.signal.aborted) process.exit(130);
    abort.abort();
  };
  process.on('SIGINT', onSigint);
  // A reader that goes away (`memql exec ... | head -1`) ends memql as SIGPIPE would a
  // local pipeline: the request is aborted, which cancels a running command.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      abort.abort();
      process.exit(EXIT_BROKEN_PIPE);
    });
  }
  try {
    return await runCli(
      invocation,
      client,
      { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
      abort.signal,
    );
  } finally {
    process.off('SIGINT', onSigint);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: internal: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
