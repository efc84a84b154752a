/**
 * `client.versions`: a run's workspace history over the version routes (see
 * `api/version-routes.ts`): versions listed and compared, checkpoints (labels), a
 * restore (itself a new version) and a fork (a new run starting at a version). Every
 * method throws a `ClientError` with the stable code when the route refuses
 * (`version_not_found`, `label_in_use`, ...).
 *
 * @module
 */

import type {
  ForkAnswer,
  VersionDiffPayload,
  VersionListPayload,
  VersionRestorePayload,
  VersionView,
} from '../contract/index.js';
import { type ClientTransport, enc, field } from './client-transport.js';

export type { ForkAnswer };

/** Which version: by number, or by label (a checkpoint). */
export type VersionRef = { version: number; label?: never } | { label: string; version?: never };

/** See the module comment. */
export class VersionClient {
  constructor(private readonly http: ClientTransport) {}

  private path(runId: string, tail: string): string {
    return `/v1/runs/${enc(runId, 'runId')}${tail}`;
  }

  /** A page of the run's versions, newest first; pass `next` as `before` for the next. */
  async list(
    runId: string,
    options: { limit?: number; before?: number; labelled?: boolean } = {},
  ): Promise<VersionListPayload> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.before !== undefined) query.set('before', String(options.before));
    if (options.labelled) query.set('labelled', 'true');
    const q = query.size > 0 ? `?${query}` : '';
    return (await this.http.json('GET', this.path(runId, `/versions${q}`))) as VersionListPayload;
  }

  /** What changed from version `from` to `to` (the current one when omitted). */
  async diff(
    runId: string,
    from: number,
    options: { to?: number; limit?: number; after?: string } = {},
  ): Promise<VersionDiffPayload> {
    const query = new URLSearchParams({ from: String(from) });
    if (options.to !== undefined) query.set('to', String(options.to));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.after !== undefined) query.set('after', options.after);
    const path = this.path(runId, `/versions/diff?${query}`);
    return (await this.http.json('GET', path)) as VersionDiffPayload;
  }

  /** Labels a version (the current one when `version` is omitted). */
  async checkpoint(runId: string, label: string, version?: number): Promise<VersionView> {
    const body = await this.http.json('POST', this.path(runId, '/checkpoints'), {
      body: { label, ...(version === undefined ? {} : { version }) },
    });
    return field<VersionView>(body, 'version');
  }

  /** Takes a label off; answers the version it named. */
  async removeCheckpoint(runId: string, label: string): Promise<VersionView> {
    const path = this.path(runId, `/checkpoints/${enc(label, 'label')}`);
    return field<VersionView>(await this.http.json('DELETE', path), 'version');
  }

  /** Puts the workspace back to a version, as a new version. */
  async restore(
    runId: string,
    ref: VersionRef,
    options: { callId?: string } = {},
  ): Promise<VersionRestorePayload> {
    const body = await this.http.json('POST', this.path(runId, '/restore'), {
      body: { ...ref, ...(options.callId === undefined ? {} : { callId: options.callId }) },
    });
    return body as VersionRestorePayload;
  }

  /** A new run whose workspace starts at a version of this one (the current by default). */
  async fork(
    runId: string,
    ref: Partial<VersionRef> & { conversationId?: string } = {},
  ): Promise<ForkAnswer> {
    return (await this.http.json('POST', this.path(runId, '/fork'), { body: ref })) as ForkAnswer;
  }
}
