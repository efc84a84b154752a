import type { PackageImport } from './import-closure.js';

/**
 * Packages the worker host binary must not reach: it runs on a user's laptop, serves
 * file actions and `exec` on one root, and keeps no database, object store, container,
 * shell allowlist or MCP server. Each entry is a package name, or a scope (`@aws-sdk/`)
 * meaning every package in it.
 */
export const FORBIDDEN_IN_WORKER = [
  // database drivers
  'postgres',
  '@electric-sql/pglite',
  // object-store SDK
  '@aws-sdk/',
  // Docker client
  'dockerode',
  // shell parsers
  'web-tree-sitter',
  'tree-sitter-bash',
  'shell-quote',
  // MCP SDK
  '@modelcontextprotocol/',
] as const;

/** Whether package `pkg` is on `list`. */
export function isForbidden(pkg: string, list: readonly string[] = FORBIDDEN_IN_WORKER): boolean {
  return list.some((f) => (f.endsWith('/') ? pkg.startsWith(f) : pkg === f));
}

/** The imports of `packages` that name a forbidden package. */
export function forbiddenImports(
  packages: readonly PackageImport[],
  list: readonly string[] = FORBIDDEN_IN_WORKER,
): PackageImport[] {
  return packages.filter((p) => isForbidden(p.pkg, list));
}
