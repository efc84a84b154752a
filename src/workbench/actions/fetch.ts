import { unlink } from 'node:fs/promises';
import type { ActionArgs, CidrRange } from '../../contract/index.js';
import { type FileContext, openForWrite } from '../../files/index.js';
import { fetchToFile, type HostResolver } from '../fetch/index.js';

/** Fetch settings of the node. */
export interface FetchLimits {
  /** Largest body when the call gives no `maxBytes`, and the ceiling when it does. */
  maxBytes: number;
  /** Time limit when the call gives none, ms. */
  timeoutMs: number;
  /** Ranges exempt from the address policy (`MEMQL_FETCH_ALLOW_PRIVATE`), as config parsed them. */
  allowPrivate: readonly CidrRange[];
  /** Name resolution; the system resolver when absent. */
  resolver?: HostResolver;
}

/** `fetch`: the node downloads `url` into the workspace at `path`, under the SSRF policy. */
export async function runFetch(
  ctx: FileContext,
  limits: FetchLimits,
  args: ActionArgs<'fetch'>,
  signal?: AbortSignal,
) {
  let opened: Awaited<ReturnType<typeof openForWrite>> | null = null;
  const result = await fetchToFile({
    url: args.url,
    maxBytes: Math.min(args.maxBytes ?? limits.maxBytes, limits.maxBytes),
    timeoutMs: args.timeoutMs ?? limits.timeoutMs,
    allowPrivate: limits.allowPrivate,
    ...(limits.resolver ? { resolver: limits.resolver } : {}),
    ...(signal ? { signal } : {}),
    destination: {
      async open() {
        opened = await openForWrite(ctx, args.path);
        return opened.handle.createWriteStream();
      },
      async abort() {
        if (opened) await unlink(opened.target.abs).catch(() => {});
      },
    },
  });
  const rel = (opened as Awaited<ReturnType<typeof openForWrite>> | null)?.target.rel ?? args.path;
  return {
    path: rel,
    bytes: result.bytes,
    status: result.status,
    contentType: result.contentType,
    finalUrl: result.finalUrl,
  };
}
