import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/**
 * The Postgres server the tests use. This machine kind runs one on 127.0.0.1:5432
 * with trust auth; `MEMQL_TEST_DATABASE_URL` points elsewhere. An unreachable server
 * fails the test run: it is never a skip.
 */
export const TEST_SERVER_URL =
  process.env.MEMQL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A database created for one test file, dropped by `drop()`. */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Creates a fresh, empty database on the test server, or on the server of `serverUrl`
 * (a cluster the test started itself, `pg-cluster.ts`).
 */
export async function createTestDatabase(serverUrl = TEST_SERVER_URL): Promise<TestDatabase> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  const name = `memql_test_${randomBytes(6).toString('hex')}`;
  try {
    await admin.unsafe(`create database ${name}`);
  } catch (err) {
    await admin.end({ timeout: 1 });
    throw new Error(
      `cannot create a test database on ${serverUrl} (${(err as Error).message}); ` +
        'start PostgreSQL (pg_ctlcluster <version> main start) or set MEMQL_TEST_DATABASE_URL',
    );
  }
  return {
    url: withDatabase(serverUrl, name),
    name,
    async drop() {
      try {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end({ timeout: 1 });
      }
    },
  };
}
