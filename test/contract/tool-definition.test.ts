import t from 'tap';
import {
  ACTION_SCHEMAS,
  type ActionName,
  actionArgsJsonSchema,
  isMutatingAction,
  NEEDS,
  TOOL_ACTION_NAMES,
  type ToolActionName,
  workbenchToolDefinition,
} from '../../src/contract/index.js';

type Schema = {
  type?: string;
  title?: string;
  description?: string;
  properties?: Record<string, Schema & { default?: unknown; enum?: unknown[] }>;
  required?: string[];
  additionalProperties?: unknown;
  anyOf?: Schema[];
  items?: Schema & { enum?: unknown[] };
  enum?: unknown[];
};

/** A complete valid args object per action: every field the schema knows. */
const FULL: Record<ToolActionName, Record<string, unknown>> = {
  fs_write: {
    path: 'a',
    content: 'x',
    encoding: 'utf8',
    append: false,
    mode: '644',
    upload: { id: 'upload-1', offset: 0, complete: true, size: 1 },
  },
  fs_read: { path: 'a', encoding: 'base64', offset: 1, length: 2 },
  fs_list: { path: 'src', recursive: true, limit: 5 },
  fs_delete: { path: 'a', recursive: true },
  exec: {
    command: 'ls',
    timeoutMs: 1000,
    env: { A: 'b' },
    stdin: 'x',
    cwd: 'src',
    outputs: [{ path: 'out/r.md', name: 'r.md', contentType: 'text/markdown' }],
  },
  fetch: { url: 'https://e.com', path: 'a', maxBytes: 10, timeoutMs: 1000 },
  promote_artifact: { path: 'a/b.md', name: 'b.md', contentType: 'text/markdown' },
  process_start: {
    command: 'python3 -m http.server',
    cwd: 'site',
    env: { PORT: '8000' },
    pty: { cols: 80, rows: 24 },
  },
  process_list: { running: true, limit: 10 },
  process_output: {
    processId: 'proc-0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e',
    stream: 'stderr',
    offset: 10,
    maxBytes: 100,
    encoding: 'base64',
  },
  process_write: { processId: 'proc-0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e', stdin: 'x', eof: true },
  process_signal: { processId: 'proc-0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e', signal: 'SIGINT' },
  process_wait: { processId: 'proc-0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e', timeoutMs: 0 },
  process_resize: { processId: 'proc-0b5e6f1c-2d3a-4b5c-8d9e-0f1a2b3c4d5e', cols: 80, rows: 24 },
  version_list: { limit: 10, before: 7, labelled: true },
  version_diff: { from: 2, to: 5, limit: 100, after: 'src/a.ts' },
  version_checkpoint: { label: 'before-refactor', version: 3, remove: false },
  version_restore: { to: 3 },
};

t.test('the definition is JSON with an object at the top', async (t) => {
  const def = workbenchToolDefinition();
  const text = JSON.stringify(def);
  t.strictSame(JSON.parse(text), def, 'survives a JSON round trip unchanged');
  t.equal(def.name, 'workbenchHost');
  t.ok(def.description.length > 50);
  const params = def.parameters as Schema;
  t.equal(params.type, 'object');
  t.strictSame(params.required, ['action', 'args']);
  t.equal(params.additionalProperties, false);
  t.strictSame(Object.keys(params.properties ?? {}).sort(), ['action', 'args', 'environment']);
  t.notMatch(text, /\$schema/, 'no nested dialect markers');
});

t.test('every action but build is offered', async (t) => {
  const params = workbenchToolDefinition().parameters as Schema;
  const offered = params.properties?.action?.enum;
  t.strictSame(offered, [
    'fs_write',
    'fs_read',
    'fs_list',
    'fs_delete',
    'exec',
    'fetch',
    'promote_artifact',
    'process_start',
    'process_list',
    'process_output',
    'process_write',
    'process_signal',
    'process_wait',
    'process_resize',
    'version_list',
    'version_diff',
    'version_checkpoint',
    'version_restore',
  ]);
  t.notOk(offered?.includes('build'));
  const titles = params.properties?.args?.anyOf?.map((branch) => branch.title);
  t.strictSame(titles, offered, 'one args shape per offered action, in the same order');
  t.notMatch(JSON.stringify(params), /"build"/, 'build appears nowhere');
});

t.test('each args shape agrees with the zod schema', async (t) => {
  const params = workbenchToolDefinition().parameters as Schema;
  const branches = params.properties?.args?.anyOf ?? [];
  for (const action of TOOL_ACTION_NAMES) {
    const json = branches.find((b) => b.title === action);
    if (!json) {
      t.fail(`no shape for ${action}`);
      continue;
    }
    const zod = ACTION_SCHEMAS[action as ActionName];
    const full = FULL[action];
    t.ok(zod.safeParse(full).success, `${action}: the full sample is valid`);
    t.equal(json.type, 'object');
    t.equal(json.additionalProperties, false, `${action}: unknown keys refused in JSON too`);
    t.notOk(zod.safeParse({ ...full, bogus: 1 }).success, `${action}: and by zod`);
    t.strictSame(
      Object.keys(json.properties ?? {}).sort(),
      Object.keys(full).sort(),
      `${action}: same fields`,
    );

    const required = new Set(json.required ?? []);
    for (const key of Object.keys(full)) {
      const { [key]: _dropped, ...rest } = full;
      const parsed = zod.safeParse(rest);
      t.equal(
        parsed.success,
        !required.has(key),
        `${action}.${key}: required in JSON iff zod needs it`,
      );
      const declaredDefault = json.properties?.[key]?.default;
      if (declaredDefault !== undefined && parsed.success) {
        t.strictSame(
          (parsed.data as Record<string, unknown>)[key],
          declaredDefault,
          `${action}.${key}: same default`,
        );
      }
    }
    t.strictSame(json, {
      title: action,
      description: json.description,
      ...actionArgsJsonSchema(action),
    });
  }
});

t.test('enumerations agree', async (t) => {
  const params = workbenchToolDefinition().parameters as Schema;
  const fsWrite = params.properties?.args?.anyOf?.find((b) => b.title === 'fs_write');
  t.strictSame(fsWrite?.properties?.encoding?.enum, ['utf8', 'base64']);
  const environment = params.properties?.environment;
  t.equal(environment?.type, 'object');
  t.equal(environment?.additionalProperties, false);
  t.strictSame(environment?.properties?.needs?.items?.enum, [...NEEDS]);
  t.notOk(environment?.properties?.needs?.items?.enum?.includes('os'), 'os is not an input need');
  t.ok(environment?.properties?.os?.enum?.includes('darwin'));
});

t.test('each call returns a fresh definition', async (t) => {
  const first = workbenchToolDefinition();
  (first.parameters as Schema).required?.push('tampered');
  t.strictSame((workbenchToolDefinition().parameters as Schema).required, ['action', 'args']);
});

t.test('mutating actions', async (t) => {
  const mutating = TOOL_ACTION_NAMES.filter((a) => isMutatingAction(a));
  t.strictSame(mutating, [
    'fs_write',
    'fs_delete',
    'exec',
    'fetch',
    'process_start',
    'version_restore',
  ]);
});
