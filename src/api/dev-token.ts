/**
 * The local node's two development tokens for user `dev`, each made once, kept in the
 * data directory (mode 0600) so the next start prints the same ones, and registered
 * (hashed) again if the database was reset meanwhile:
 *
 * - the agent token (`dev-token`): for tool loops, the MCP server and `memql worker`;
 * - the person token (`person-token`): the user's own, for signing in to the console
 *   and the CLI in their shell; the only one that decides consent. It is kept apart
 *   so that it is never what a tool loop is handed.
 *
 * @module
 */

import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TokenKind } from '../contract/index.js';
import {
  addApiToken,
  createApiToken,
  createOperatorCredential,
  type Queryable,
  resolveOperatorCredential,
} from '../store/index.js';

/** The user the development tokens belong to. */
export const DEV_USER_ID = 'dev';
/** The file under the data directory that keeps the agent token. */
export const DEV_TOKEN_FILE = 'dev-token';
/** The file under the data directory that keeps the person token. */
export const PERSON_TOKEN_FILE = 'person-token';

/** A development token and where it is kept. */
export interface DevToken {
  token: string;
  userId: string;
  kind: TokenKind;
  file: string;
  /** True when this start made it. */
  created: boolean;
}

/** A saved secret's text, or '' when the file does not exist. */
async function readSaved(file: string): Promise<string> {
  return readFile(file, 'utf8').then(
    (text) => text.trim(),
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    },
  );
}

/** Reuses the agent token in `<dataDir>/dev-token`, or makes one and saves it there. */
export function ensureDevToken(q: Queryable, dataDir: string): Promise<DevToken> {
  return ensureSavedToken(q, dataDir, DEV_TOKEN_FILE, 'agent', 'development token');
}

/** Reuses the person token in `<dataDir>/person-token`, or makes one and saves it there. */
export function ensurePersonToken(q: Queryable, dataDir: string): Promise<DevToken> {
  return ensureSavedToken(q, dataDir, PERSON_TOKEN_FILE, 'person', 'development person token');
}

async function ensureSavedToken(
  q: Queryable,
  dataDir: string,
  name: string,
  kind: TokenKind,
  label: string,
): Promise<DevToken> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, name);
  const saved = await readSaved(file);
  if (/^[\x21-\x7e]{16,512}$/.test(saved)) {
    await addApiToken(q, DEV_USER_ID, saved, { label, kind });
    await chmod(file, 0o600);
    return { token: saved, userId: DEV_USER_ID, kind, file, created: false };
  }
  const made = await createApiToken(q, DEV_USER_ID, { label, kind });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${made.token}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return { token: made.token, userId: DEV_USER_ID, kind, file, created: true };
}

/** The file under the data directory that keeps the local node's operator credential. */
export const OPERATOR_TOKEN_FILE = 'operator-token';

/**
 * The local node's operator credential (for `/v1/admin`: making other users' tokens
 * through the running node): reused from `<dataDir>/operator-token` while the database
 * knows it, else made anew and saved there (mode 0600). Returns the file's path.
 */
export async function ensureOperatorToken(q: Queryable, dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, OPERATOR_TOKEN_FILE);
  const saved = await readSaved(file);
  if (saved !== '' && (await resolveOperatorCredential(q, saved)) !== null) {
    await chmod(file, 0o600);
    return file;
  }
  const made = await createOperatorCredential(q, { label: 'local node' });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${made.token}\n`, { mode: 0o600 });
  await rename(tmp, file);
  return file;
}
