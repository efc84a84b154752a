/**
 * The trust bundle of a sandbox with network: the system's CAs, the node's egress CA
 * (for the hosts the proxy adds a secret for) and the operator's extra CAs
 * (`MEMQL_EGRESS_CA_FILE`), one PEM file every trust variable of the sandbox names.
 * Written once per node process, atomically, readable by the sandbox uid.
 *
 * @module
 */

import { chmod, readFile, rename, writeFile } from 'node:fs/promises';

/** Where Debian (and the images) keep the system's CA bundle. */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** What the bundle is made of. */
export interface TrustBundleParts {
  /** The node CA's certificate file. */
  readonly nodeCaPath: string;
  /** The operator's extra certificates, PEM, or null. */
  readonly extraPem: string | null;
  /** The system bundle's path; a missing file contributes nothing. */
  readonly systemBundle?: string;
}

/** Writes the bundle to `path` (mode 0644) and returns it. */
export async function writeTrustBundle(path: string, parts: TrustBundleParts): Promise<string> {
  const system = await readFile(parts.systemBundle ?? SYSTEM_CA_BUNDLE, 'utf8').catch(
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    },
  );
  const pieces = [system, await readFile(parts.nodeCaPath, 'utf8'), parts.extraPem ?? ''];
  const text = `${pieces
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .join('\n')}\n`;
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, text, { mode: 0o644 });
  await chmod(partial, 0o644);
  await rename(partial, path);
  return path;
}
