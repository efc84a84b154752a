import { join, relative } from 'node:path';
import t from 'tap';
import { FORBIDDEN_IN_WORKER, forbiddenImports } from '../support/forbidden-packages.js';
import { importClosure, packageOf, runtimeImports } from '../support/import-closure.js';
import { REPO_ROOT } from '../support/readme.js';

/**
 * The worker host binary stays thin: it runs on a user's own machine and serves file
 * actions and `exec` on one root, so nothing it imports, however indirectly, may reach
 * a database driver, the object-store SDK, the Docker client, a shell parser or the MCP
 * SDK. The walk follows this repository's modules from `nodes/worker/main.ts` through
 * the TypeScript sources and fails on any module of them importing such a package.
 */

const WORKER_MAIN = join(REPO_ROOT, 'nodes/worker/main.ts');

t.test('the import reader keeps runtime imports and leaves out type-only ones', async (t) => {
  const text = [
    "import { a } from './a.js';",
    "import type { B } from './b.js';",
    "import { type C } from './c.js';",
    'import {',
    '  d,',
    '  type D,',
    "} from '@scope/pkg/sub';",
    "export { e } from './e.js';",
    "export type { F } from './f.js';",
    "import './side-effect.js';",
    "import Default, * as ns from 'pkg';",
    'export type G = number;',
    "const lazy = () => import('./lazy.js');",
    '/**',
    " * import { fromDoc } from './doc.js';",
    ' */',
  ].join('\n');
  t.same(runtimeImports(text), [
    './a.js',
    './c.js',
    '@scope/pkg/sub',
    './e.js',
    './side-effect.js',
    'pkg',
    './lazy.js',
  ]);
  t.equal(packageOf('@aws-sdk/client-s3'), '@aws-sdk/client-s3');
  t.equal(packageOf('web-tree-sitter/sub/path.js'), 'web-tree-sitter');
  t.equal(packageOf('node:fs'), 'node:fs');
});

t.test('the walk finds a forbidden import planted deep in the closure', async (t) => {
  const files: Record<string, string> = {
    '/p/main.ts': "import { x } from './a.js';\nimport type { T } from './typed.js';",
    '/p/a.ts': "import { y } from './b/c.js';\nimport pino from 'pino';",
    '/p/b/c.ts': "export const y = () => import('../lazy.js');",
    '/p/lazy.ts': "import Docker from 'dockerode';\nimport { S3 } from '@aws-sdk/client-s3';",
    // Only a type import reaches it: never loaded, never walked.
    '/p/typed.ts': "import postgres from 'postgres';",
  };
  const found = importClosure('/p/main.ts', '.ts', (path) => files[path] ?? null);
  t.same(found.modules, ['/p/main.ts', '/p/a.ts', '/p/b/c.ts', '/p/lazy.ts']);
  t.same(
    forbiddenImports(found.packages).map((p) => `${p.from}: ${p.pkg}`),
    ['/p/lazy.ts: dockerode', '/p/lazy.ts: @aws-sdk/client-s3'],
  );
  t.same(forbiddenImports([{ pkg: 'pino', spec: 'pino', from: '/p/a.ts' }]), []);
  t.same(
    forbiddenImports(
      ['postgres', '@modelcontextprotocol/sdk', 'shell-quote', 'tree-sitter-bash'].map((pkg) => ({
        pkg,
        spec: pkg,
        from: '/p/x.ts',
      })),
    ).length,
    4,
    'every kind on the list is caught',
  );
  t.throws(() => importClosure('/p/missing.ts', '.ts', () => null), /does not exist/);
});

t.test('the worker host binary reaches none of the forbidden packages', async (t) => {
  const found = importClosure(WORKER_MAIN, '.ts');
  t.ok(found.modules.length > 10, 'the walk followed the worker binary');
  t.ok(
    found.packages.some((p) => p.pkg === '@grpc/grpc-js'),
    'the walk reached the mesh (it records packages)',
  );
  t.same(
    forbiddenImports(found.packages).map((p) => `${relative(REPO_ROOT, p.from)} imports ${p.spec}`),
    [],
    `the worker reaches none of ${FORBIDDEN_IN_WORKER.join(', ')}`,
  );
});
