/**
 * Running `memql workers` and `memql consent`: each calls the client and prints a
 * table, or JSON with `--json`.
 */
import type { Writable } from 'node:stream';
import type { WorkbenchClient } from '../../src/client/index.js';
import type { WorkerCliCommand } from './worker-args.js';
import {
  formatApproval,
  formatConsentRequests,
  formatInvocations,
  formatWorkers,
} from './worker-output.js';

const json = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value, null, 2)}\n`);

/** Runs one `workers` or `consent` subcommand; resolves to the exit code. */
export async function runWorkerCommand(
  command: WorkerCliCommand,
  client: WorkbenchClient,
  out: Writable,
  asJson: boolean,
): Promise<number> {
  switch (command.kind) {
    case 'workers-list': {
      const answer = await client.workers.list();
      asJson ? json(out, answer) : out.write(formatWorkers(answer));
      return 0;
    }
    case 'workers-scope': {
      const answer = await client.workers.setScope(command.workerId, command.scope);
      asJson
        ? json(out, answer)
        : out.write(
            `worker ${command.workerId}: scope ${answer.previousScope} -> ${answer.consent.scope}\n`,
          );
      return 0;
    }
    case 'workers-kill-switch': {
      const answer = await client.workers.setKillSwitch(
        command.engaged,
        command.workerId === undefined ? {} : { workerId: command.workerId },
      );
      const which = command.workerId === undefined ? 'every worker' : `worker ${command.workerId}`;
      asJson
        ? json(out, answer)
        : out.write(
            answer.killSwitch.engaged
              ? `kill switch on for ${which}: no call runs there until it is turned off\n`
              : `kill switch off for ${which}\n`,
          );
      return 0;
    }
    case 'workers-invocations': {
      const { kind: _kind, ...filter } = command;
      const records = await client.workers.listInvocations(filter);
      asJson ? json(out, { invocations: records }) : out.write(formatInvocations(records));
      return 0;
    }
    case 'consent-list': {
      const requests = await client.workers.listConsentRequests(
        command.status === undefined ? {} : { status: command.status },
      );
      asJson ? json(out, { requests }) : out.write(formatConsentRequests(requests));
      return 0;
    }
    case 'consent-approve': {
      const answer = await client.workers.approveConsentRequest(
        command.requestId,
        command.scope === undefined ? {} : { scope: command.scope },
      );
      asJson ? json(out, answer) : out.write(formatApproval(answer));
      return 0;
    }
    case 'consent-deny': {
      const request = await client.workers.denyConsentRequest(command.requestId);
      asJson
        ? json(out, { request })
        : out.write(
            `denied ${request.id}; worker ${request.workerId} keeps the scope it had (${request.heldScope} when asked)\n`,
          );
      return 0;
    }
  }
}
