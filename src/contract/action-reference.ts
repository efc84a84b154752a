/**
 * The per-action argument reference of docs/actions.md, made from the same schemas the
 * envelope parser holds calls to (a test keeps that copy in step).
 *
 * @module
 */

import { TOOL_ACTION_NAMES, type ToolActionName } from './actions.js';
import { actionArgsJsonSchema, type JsonSchema } from './tool-definition.js';

/** What each action is for, one line. */
const PURPOSE: Record<ToolActionName, string> = {
  fs_write: 'create, replace or append to a file (parent directories are made)',
  fs_read: 'read a file, or a byte range of it',
  fs_list: 'list a directory',
  fs_delete: 'delete a file, or a directory tree',
  exec: 'run an allowlisted shell command in the sandbox, in the workspace',
  fetch: 'download an http(s) URL into a workspace file',
  promote_artifact: 'hand a workspace file to the user as an artifact',
  process_start:
    'start a background process that outlives the call; answers its `processId` at once',
  process_list: "list the run's background processes, newest first",
  process_output: "read a process's stdout or stderr from a byte offset",
  process_write: "write to a running process's standard input, or close it",
  process_signal: "send a signal to a running process's process group",
  process_wait: 'wait, within a time limit, for a process to end',
  process_resize: "resize a running process's terminal",
  version_list: "list the workspace's versions, newest first, with what made each",
  version_diff: 'the paths added, changed and removed between two versions',
  version_checkpoint: 'label a version (a checkpoint, kept past retention), or take a label off',
  version_restore: 'put the workspace back to a version, as a new version',
};

function typeOf(schema: JsonSchema): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(typeOf).join(' or ');
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (schema.type === 'object') return schema.properties ? 'object' : 'object of strings';
  if (schema.type === 'array') {
    const items = (schema.items ?? {}) as JsonSchema;
    return items.type === 'object' ? 'array of objects' : `array of ${typeOf(items)}`;
  }
  if (schema.type === 'integer') return 'integer';
  return String(schema.type ?? 'any');
}

function limitsOf(schema: JsonSchema): string {
  const out: string[] = [];
  if (typeof schema.minimum === 'number') out.push(`≥ ${schema.minimum}`);
  if (typeof schema.exclusiveMinimum === 'number') out.push(`> ${schema.exclusiveMinimum}`);
  if (typeof schema.maximum === 'number' && schema.maximum < Number.MAX_SAFE_INTEGER) {
    out.push(`≤ ${schema.maximum}`);
  }
  if (typeof schema.maxLength === 'number') out.push(`at most ${schema.maxLength} chars`);
  if (typeof schema.maxItems === 'number') out.push(`at most ${schema.maxItems} entries`);
  return out.join(', ');
}

/** The fields of an object schema that are themselves described field by field. */
function fieldsOf(schema: JsonSchema): JsonSchema | null {
  if (schema.type === 'object' && schema.properties) return schema;
  const items = schema.type === 'array' ? (schema.items as JsonSchema | undefined) : undefined;
  return items?.type === 'object' && items.properties ? items : null;
}

/** Table rows of an object's fields, in schema order; nested fields as `outer.inner`. */
function rowsOf(schema: JsonSchema, prefix = ''): string[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).flatMap(([name, prop]) => {
    const given = required.has(name)
      ? 'required'
      : prop.default !== undefined
        ? `default \`${JSON.stringify(prop.default)}\``
        : 'optional';
    const limits = limitsOf(prop);
    const text = String(prop.description ?? '').replace(/\|/g, '\\|');
    const row = `| \`${prefix}${name}\` | ${typeOf(prop)} | ${given} | ${text}${limits ? ` (${limits})` : ''} |`;
    const inner = fieldsOf(prop);
    const innerPrefix = `${prefix}${name}${prop.type === 'array' ? '[]' : ''}.`;
    return inner ? [row, ...rowsOf(inner, innerPrefix)] : [row];
  });
}

/** The markdown reference: one table per action, its arguments in schema order. */
export function renderActionReference(): string {
  const sections = TOOL_ACTION_NAMES.map((action) =>
    [
      `**\`${action}\`**: ${PURPOSE[action]}.`,
      '',
      '| argument | type | given | meaning |',
      '|---|---|---|---|',
      ...rowsOf(actionArgsJsonSchema(action)),
    ].join('\n'),
  );
  return sections.join('\n\n');
}
