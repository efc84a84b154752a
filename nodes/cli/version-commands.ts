/**
 * Running the history commands: each is one client call, printed as a table or lines,
 * or JSON with `--json`.
 */
import type { Writable } from 'node:stream';
import type { VersionView, WorkbenchClient } from '../../src/client/index.js';
import { table } from './cli-table.js';
import type { VersionCliCommand } from './version-args.js';

const json = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value, null, 2)}\n`);

/** What made a version, in a few words. */
function madeBy(v: VersionView): string {
  switch (v.source) {
    case 'command':
      return `command ${v.commandId ?? ''}`.trim();
    case 'restore':
      return `restore of ${v.restoredFrom}`;
    case 'fork':
      return v.forkedFrom ? `fork of ${v.forkedFrom.runId}@${v.forkedFrom.version}` : 'fork';
    case 'action':
      return v.action ?? 'action';
    default:
      return v.source;
  }
}

/** Versions as a table, newest first. */
export function formatVersions(versions: readonly VersionView[]): string {
  if (versions.length === 0) return 'no versions yet\n';
  return table(
    ['VERSION', 'CREATED', 'MADE BY', '+', '~', '-', 'LABEL'],
    versions.map((v) => [
      String(v.version),
      v.createdAt,
      madeBy(v),
      String(v.added),
      String(v.changed),
      String(v.removed),
      v.label ?? '',
    ]),
  );
}

/** Runs one history command; resolves to the exit code. */
export async function runVersionCommand(
  command: VersionCliCommand,
  client: WorkbenchClient,
  out: Writable,
  asJson: boolean,
): Promise<number> {
  switch (command.kind) {
    case 'versions': {
      const page = await client.versions.list(command.runId, {
        ...(command.limit === undefined ? {} : { limit: command.limit }),
        ...(command.before === undefined ? {} : { before: command.before }),
        labelled: command.labelled,
      });
      if (asJson) json(out, page);
      else {
        out.write(formatVersions(page.versions));
        if (page.next !== null) out.write(`more: --before ${page.next}\n`);
      }
      return 0;
    }
    case 'diff': {
      const diff = await client.versions.diff(command.runId, command.from, {
        ...(command.to === undefined ? {} : { to: command.to }),
      });
      if (asJson) json(out, diff);
      else {
        const mark = { added: 'A', changed: 'M', removed: 'D' } as const;
        for (const e of diff.entries) out.write(`${mark[e.change]} ${e.path}\n`);
        out.write(
          `${diff.from} -> ${diff.to}: ${diff.added} added, ${diff.changed} changed, ${diff.removed} removed${diff.next === null ? '' : ' (more: --json pages with after)'}\n`,
        );
      }
      return 0;
    }
    case 'checkpoint': {
      const version = command.remove
        ? await client.versions.removeCheckpoint(command.runId, command.label)
        : await client.versions.checkpoint(command.runId, command.label, command.version);
      asJson
        ? json(out, { version })
        : out.write(
            command.remove
              ? `label ${command.label} taken off version ${version.version}\n`
              : `version ${version.version} labelled ${command.label}\n`,
          );
      return 0;
    }
    case 'restore': {
      const restored = await client.versions.restore(command.runId, command.ref);
      asJson
        ? json(out, restored)
        : out.write(
            `restored version ${restored.restoredFrom} as version ${restored.version}: ${restored.added} added, ${restored.changed} changed, ${restored.removed} removed\n`,
          );
      return 0;
    }
    case 'fork': {
      const forked = await client.versions.fork(command.runId, command.ref ?? {});
      asJson ? json(out, forked) : out.write(`${forked.run.id}\n`);
      return 0;
    }
  }
}
