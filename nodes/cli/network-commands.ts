/**
 * Running `memql network`: each reads or changes a run's network through the client
 * and prints what the run may reach now, or JSON with `--json`.
 */
import type { Writable } from 'node:stream';
import type { RunNetwork, WorkbenchClient } from '../../src/client/index.js';
import type { NetworkCliCommand } from './network-args.js';

const json = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value, null, 2)}\n`);

/** A run's network as `key: value` lines. */
export function formatNetwork(runId: string, network: RunNetwork): string {
  return [
    `run:      ${runId}`,
    `allow:    ${network.allow.length === 0 ? 'none (its commands reach no network)' : network.allow.join(', ')}`,
    `secrets:  ${network.secrets.length === 0 ? '-' : network.secrets.join(', ')}`,
    '',
  ].join('\n');
}

/** `existing` followed by what `added` has that it lacks. */
function union(existing: readonly string[], added: readonly string[]): string[] {
  return [...existing, ...added.filter((item) => !existing.includes(item))];
}

/** Runs one `network` subcommand; resolves to the exit code. */
export async function runNetworkCommand(
  command: NetworkCliCommand,
  client: WorkbenchClient,
  out: Writable,
  asJson: boolean,
): Promise<number> {
  let network: RunNetwork;
  switch (command.kind) {
    case 'network-show':
      network = (await client.getRun(command.runId)).network;
      break;
    case 'network-allow': {
      // Read, then replace: the server checks the whole, so nothing outside the ceiling
      // is added, and a change made meanwhile by someone else is replaced.
      const current = (await client.getRun(command.runId)).network;
      network = (
        await client.setRunNetwork(command.runId, {
          allow: union(current.allow, command.allow),
          secrets: union(current.secrets, command.secrets),
        })
      ).network;
      break;
    }
    case 'network-set':
      network = (
        await client.setRunNetwork(command.runId, {
          allow: command.allow,
          secrets: command.secrets,
        })
      ).network;
      break;
    case 'network-clear':
      network = (await client.setRunNetwork(command.runId, { allow: [], secrets: [] })).network;
      break;
  }
  asJson
    ? json(out, { runId: command.runId, network })
    : out.write(formatNetwork(command.runId, network));
  return 0;
}
