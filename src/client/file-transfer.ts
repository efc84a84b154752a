/**
 * Bytes in and out of the API without holding them whole: an artifact's or a
 * workspace file's bytes opened as a stream or downloaded to a file or stream (a body
 * shorter or longer than its `Content-Length` is `unavailable`, and a partial file is
 * removed), and a workspace file uploaded from bytes or a stream. {@link WorkbenchClient}
 * offers these as its methods.
 *
 * @module
 */

import type { FsWritePayload } from '../contract/index.js';
import { type ArtifactBody, type DownloadResult, writeArtifact } from './artifact-download.js';
import { ClientError, isAbortError } from './client-error.js';
import { type DownloadOptions, type FileCallOptions, fileQuery } from './client-options.js';
import { type ClientTransport, enc, field, notShaped } from './client-transport.js';

/** A `GET` whose answer is bytes: the body as a stream, its size and content type. */
async function openBody(
  http: ClientTransport,
  path: string,
  label: string,
  signal: AbortSignal | undefined,
): Promise<ArtifactBody> {
  const response = await http.send('GET', path, { raw: true, ...(signal ? { signal } : {}) });
  if (response.body === null) throw notShaped(label, 'a body');
  const length = response.headers.get('content-length');
  return {
    size: length !== null && /^\d+$/.test(length) ? Number(length) : null,
    contentType: response.headers.get('content-type'),
    body: response.body as AsyncIterable<Uint8Array>,
  };
}

/** An artifact's bytes as a stream (`GET /v1/artifacts/:id/content`). */
export function openArtifact(
  http: ClientTransport,
  artifactId: string,
  options: { signal?: AbortSignal } = {},
): Promise<ArtifactBody> {
  const path = `/v1/artifacts/${enc(artifactId, 'artifactId')}/content`;
  return openBody(http, path, '/v1/artifacts/:id/content', options.signal);
}

/** An artifact downloaded to a file or stream, checked against its `Content-Length`. */
export async function downloadArtifact(
  http: ClientTransport,
  artifactId: string,
  options: DownloadOptions,
): Promise<DownloadResult> {
  const artifact = await openArtifact(
    http,
    artifactId,
    options.signal ? { signal: options.signal } : {},
  );
  const result = await writeArtifact(artifact, options.to, options.onProgress, options.signal);
  if (artifact.size !== null && result.bytes !== artifact.size) {
    throw new ClientError(
      'unavailable',
      `unavailable: artifact ${artifactId} arrived with ${result.bytes} of ${artifact.size} bytes; download it again`,
    );
  }
  return result;
}

/** A workspace file written from bytes or a stream (`PUT /v1/runs/:runId/files`). */
export async function uploadFile(
  http: ClientTransport,
  runId: string,
  path: string,
  source: Uint8Array | AsyncIterable<Uint8Array>,
  options: FileCallOptions & { readonly mode?: string } = {},
): Promise<FsWritePayload> {
  const query = fileQuery(path, options);
  if (options.mode !== undefined) query.set('mode', options.mode);
  const body = await http.json('PUT', `/v1/runs/${enc(runId, 'runId')}/files?${query}`, {
    bytes: source,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return field<FsWritePayload>(body, 'payload');
}

/** A workspace file's bytes as a stream (`GET /v1/runs/:runId/files`). */
export function openFile(
  http: ClientTransport,
  runId: string,
  path: string,
  options: FileCallOptions = {},
): Promise<ArtifactBody> {
  const query = fileQuery(path, options);
  const url = `/v1/runs/${enc(runId, 'runId')}/files?${query}`;
  return openBody(http, url, '/v1/runs/:runId/files', options.signal);
}

/**
 * A workspace file downloaded to a file or stream. A body that breaks off, or is
 * shorter than its `Content-Length` (the file changed while it was read), is
 * `unavailable`.
 */
export async function downloadFile(
  http: ClientTransport,
  runId: string,
  path: string,
  options: DownloadOptions,
): Promise<DownloadResult> {
  const file = await openFile(http, runId, path, options.signal ? { signal: options.signal } : {});
  let result: DownloadResult;
  try {
    result = await writeArtifact(file, options.to, options.onProgress, options.signal);
  } catch (err) {
    if (isAbortError(err)) throw err;
    throw new ClientError(
      'unavailable',
      `unavailable: "${path}" of run ${runId} did not arrive whole (${(err as Error).message}); read it again`,
    );
  }
  if (file.size !== null && result.bytes !== file.size) {
    throw new ClientError(
      'unavailable',
      `unavailable: "${path}" of run ${runId} arrived with ${result.bytes} of ${file.size} bytes; read it again`,
    );
  }
  return result;
}
