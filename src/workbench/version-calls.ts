/**
 * The host's side of the `version_*` actions: a run's versions listed, two compared, a
 * label set or taken off (reads and a row's update: no workspace is held), and a
 * restore, which holds the workspace as a file action does and puts the holder's copy
 * back to the version in O(changed) (`sync/restore.ts`).
 *
 * @module
 */

import {
  type ActionArgs,
  type DiffEntry,
  type Envelope,
  type VersionDiffPayload,
  type VersionListPayload,
  type VersionRestorePayload,
  type VersionView,
  WorkbenchError,
} from '../contract/index.js';
import {
  type Db,
  diffVersions,
  findLabel,
  getManifestHead,
  getVersion,
  listVersions,
  removeLabel,
  setLabel,
} from '../store/index.js';
import type { WorkspaceAccess } from './lifecycle/index.js';
import { materializeTarget, restoreCopy, type WorkspaceSyncDeps } from './sync/index.js';

/** A `version_*` envelope. */
export type VersionEnvelope = Extract<
  Envelope,
  { action: 'version_list' | 'version_diff' | 'version_checkpoint' | 'version_restore' }
>;

/** Whether an envelope is a `version_*` call. */
export function isVersionEnvelope(envelope: Envelope): envelope is VersionEnvelope {
  return envelope.action.startsWith('version_');
}

/** What {@link VersionCalls} needs of the host. */
export interface VersionCallsDeps {
  db: Db;
  nodeId: string;
  access: WorkspaceAccess;
  sync: WorkspaceSyncDeps;
}

function noVersion(runId: string, what: string): WorkbenchError {
  return new WorkbenchError(
    'version_not_found',
    `version_not_found: run "${runId}" has no kept ${what}; version_list names the versions it keeps`,
    { runId },
  );
}

/** Permission bits as the octal digits `fs_write` takes. */
function octal(mode: number): string {
  return mode.toString(8).padStart(3, '0');
}

/** See the module comment. */
export class VersionCalls {
  readonly #deps: VersionCallsDeps;

  constructor(deps: VersionCallsDeps) {
    this.#deps = deps;
  }

  /** Runs one `version_*` call. */
  handle(envelope: VersionEnvelope): Promise<unknown> {
    const { runId } = envelope;
    switch (envelope.action) {
      case 'version_list':
        return this.#list(runId, envelope.args);
      case 'version_diff':
        return this.#diff(runId, envelope.args);
      case 'version_checkpoint':
        return this.#checkpoint(runId, envelope.args);
      case 'version_restore':
        return this.#restore(runId, envelope.args, envelope.callId);
    }
  }

  async #list(runId: string, args: ActionArgs<'version_list'>): Promise<VersionListPayload> {
    const { db } = this.#deps;
    const head = await getManifestHead(db, runId);
    const page = await listVersions(db, runId, {
      limit: args.limit,
      ...(args.before === undefined ? {} : { before: args.before }),
      labelled: args.labelled,
    });
    return { versions: page.versions, current: head.version, next: page.next };
  }

  /** The version `version` names (the current one when omitted), refused unless kept. */
  async #kept(runId: string, version: number | undefined): Promise<VersionView> {
    const number = version ?? (await getManifestHead(this.#deps.db, runId)).version;
    const found = number >= 1 ? await getVersion(this.#deps.db, runId, number) : null;
    if (found === null) {
      throw noVersion(runId, version === undefined ? 'version yet' : `version ${number}`);
    }
    return found;
  }

  async #diff(runId: string, args: ActionArgs<'version_diff'>): Promise<VersionDiffPayload> {
    const from = await this.#kept(runId, args.from);
    const to = await this.#kept(runId, args.to);
    const diff = await diffVersions(this.#deps.db, runId, {
      from: from.version,
      to: to.version,
      // One more than the page: whether there is a next page.
      limit: args.limit + 1,
      ...(args.after === undefined ? {} : { after: args.after }),
    });
    const rows = diff.rows.slice(0, args.limit);
    const entries: DiffEntry[] = rows.map((row) => ({
      path: row.path,
      change: row.from === null ? 'added' : row.to === null ? 'removed' : 'changed',
      from: row.from && { size: row.from.size, hash: row.from.hash, mode: octal(row.from.mode) },
      to: row.to && { size: row.to.size, hash: row.to.hash, mode: octal(row.to.mode) },
    }));
    return {
      from: from.version,
      to: to.version,
      entries,
      added: diff.added,
      changed: diff.changed,
      removed: diff.removed,
      next: diff.rows.length > args.limit ? (entries.at(-1)?.path ?? null) : null,
    };
  }

  async #checkpoint(
    runId: string,
    args: ActionArgs<'version_checkpoint'>,
  ): Promise<{ version: VersionView; removed: boolean }> {
    const { db } = this.#deps;
    if (args.remove) {
      const was = await removeLabel(db, runId, args.label);
      if (was === null) throw noVersion(runId, `version labelled "${args.label}"`);
      return { version: was, removed: true };
    }
    const target = await this.#kept(runId, args.version);
    const outcome = await setLabel(db, runId, target.version, args.label);
    if (outcome.kind === 'taken') {
      throw new WorkbenchError(
        'label_in_use',
        `label_in_use: "${args.label}" already names version ${outcome.version} of run "${runId}"; take it off first (version_checkpoint with remove: true) or choose another label`,
        { label: args.label, version: outcome.version },
      );
    }
    if (outcome.kind === 'no_version') throw noVersion(runId, `version ${target.version}`);
    return { version: outcome.version, removed: false };
  }

  async #restore(
    runId: string,
    args: ActionArgs<'version_restore'>,
    callId: string | undefined,
  ): Promise<VersionRestorePayload> {
    const { db, access, nodeId } = this.#deps;
    let number: number;
    if (typeof args.to === 'string') {
      const labelled = await findLabel(db, runId, args.to);
      if (labelled === null) throw noVersion(runId, `version labelled "${args.to}"`);
      number = labelled;
    } else number = args.to;
    const restored = (await this.#kept(runId, number)).version;
    return access.call(runId, false, async (held) => {
      try {
        const result = await restoreCopy(
          db,
          {
            ...materializeTarget(this.#deps.sync, { runId, dir: held.dir }),
            nodeId,
            generation: held.generation,
            base: held.base,
          },
          {
            source: 'restore',
            action: 'version_restore',
            restoredFrom: restored,
            ...(callId === undefined ? {} : { callId }),
          },
        );
        access.wrote(runId);
        if (result.dirMatchesVersion) access.rebase(held, held.base);
        else await access.reset(held);
        const { dirMatchesVersion: _matches, ...counts } = result;
        return { ...counts, restoredFrom: restored };
      } catch (err) {
        // Partly written, or not committed: the copy is put back to the manifest.
        access.wrote(runId);
        await access.reset(held);
        throw err;
      }
    });
  }
}
