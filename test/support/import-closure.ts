import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The transitive imports of one entry module, read from the source text: every
 * relative import is followed, every bare specifier (a package, or `node:*`) is
 * recorded with the module that names it. Used on the TypeScript sources (the worker's
 * closure test) and on the compiled JavaScript (the worker's start bench).
 *
 * What the runtime would not load is left out: `import type` and `export type` are
 * erased by the compiler. An `import { type A }` is not (under `verbatimModuleSyntax`
 * it stays an import for its side effects), so it counts. A dynamic `import()` counts
 * too: it may run, and a thin closure holds no path to a heavy module at all.
 */

/**
 * A module's imports: a static one begins a line (the formatter and the compiler both
 * write them so, and a comment's ` * import` line does not), a dynamic one may be
 * anywhere. An import clause holds no quote and no semicolon, so a match never runs
 * from one statement into the next.
 */
const IMPORT_RE =
  /^\s*(?:import|export)(\s+type)?\s[^'";]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The runtime imports named in one module's text (type-only ones left out). */
export function runtimeImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    if (m[1] !== undefined) continue;
    found.push((m[2] ?? m[3] ?? m[4])!);
  }
  return found;
}

/** The package a bare specifier names: `@scope/name` or `name` (`node:*` as it is). */
export function packageOf(spec: string): string {
  if (spec.startsWith('node:')) return spec;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** A bare import found in the closure: the package and the module that names it. */
export interface PackageImport {
  readonly pkg: string;
  readonly spec: string;
  readonly from: string;
}

/** The closure of an entry module. */
export interface ImportClosure {
  /** Every module reached through relative imports, the entry first, absolute paths. */
  readonly modules: readonly string[];
  /** Every bare import of those modules. */
  readonly packages: readonly PackageImport[];
}

/**
 * Walks from `entry`. `ext` is the extension of the files walked: `.ts` maps a
 * specifier's `.js` onto the source file, `.js` takes the compiled file as it is.
 * `read` is how a module's text is read (a test plants modules through it).
 */
export function importClosure(
  entry: string,
  ext: '.ts' | '.js',
  read: (path: string) => string | null = (path) =>
    existsSync(path) ? readFileSync(path, 'utf8') : null,
): ImportClosure {
  const seen = new Set<string>();
  const packages: PackageImport[] = [];
  const queue = [resolve(entry)];
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    if (seen.has(path)) continue;
    const text = read(path);
    if (text === null) throw new Error(`${path} is imported but does not exist`);
    seen.add(path);
    for (const spec of runtimeImports(text)) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(path), spec);
        queue.push(ext === '.ts' ? target.replace(/\.js$/, '.ts') : target);
      } else {
        packages.push({ pkg: packageOf(spec), spec, from: path });
      }
    }
  }
  return { modules: [...seen], packages };
}
