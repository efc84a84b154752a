import t from 'tap';
import { CONFIG_VARIABLES, renderConfigTable } from '../../src/config/index.js';

/** Splits a Markdown row into cells, honouring escaped pipes. */
const cells = (row: string) =>
  row
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());

t.test('the table lists every variable once, in registry order, with four cells', async (t) => {
  const lines = renderConfigTable().trimEnd().split('\n');
  t.equal(lines[0], '| Variable | Default | Type (unit) | Meaning |');
  t.equal(lines[1], '| --- | --- | --- | --- |');
  const rows = lines.slice(2);
  t.equal(rows.length, CONFIG_VARIABLES.length);
  CONFIG_VARIABLES.forEach((variable, index) => {
    const row = cells(rows[index] ?? '');
    t.equal(row.length, 4, variable.name);
    t.equal(row[0], `\`${variable.name}\``);
    t.ok((row[3] ?? '').length > 0, `${variable.name} has a meaning`);
  });
});

t.test('defaults, aliases and secrets are rendered', async (t) => {
  const table = renderConfigTable();
  const rowOf = (name: string) =>
    cells(table.split('\n').find((l) => l.startsWith(`| \`${name}\``)) ?? '');
  t.equal(rowOf('MEMQL_COMMAND_CONCURRENCY')[1], '`4`');
  t.equal(rowOf('MEMQL_WORKBENCH_ROOT')[1], '`/var/lib/memql/workbenches`');
  t.equal(rowOf('MEMQL_HYDRATED_IDLE_TTL_MS')[2], 'non-negative integer (ms)');
  t.match(rowOf('MEMQL_OBJECT_STORE_DIR')[1], /<MEMQL_DATA_DIR>\/objects/);
  t.equal(rowOf('MEMQL_WORKER_PEERS')[1], 'empty');
  t.match(rowOf('MEMQL_RUNNER_IMAGE')[3], /EXECUTION_WORKSPACE_RUNNER_IMAGE/);
  t.match(rowOf('MEMQL_MESH_TOKEN')[3], /Secret/);
  t.match(rowOf('MEMQL_S3_SECRET_ACCESS_KEY')[3], /Secret/);
  t.notMatch(rowOf('MEMQL_S3_BUCKET')[3], /Secret/);
});

t.test('every variable documents a default and a type', async (t) => {
  for (const variable of CONFIG_VARIABLES) {
    const documented = variable.default !== undefined || 'defaultText' in variable;
    t.ok(documented, `${variable.name} has a default or says why not`);
    t.ok(variable.type.length > 0, `${variable.name} has a type`);
    t.match(variable.name, /^MEMQL_[A-Z0-9_]+$/);
  }
  // Names with a unit suffix say the same unit in their type.
  for (const variable of CONFIG_VARIABLES) {
    if (variable.name.endsWith('_MS')) t.match(variable.type, /\(ms\)/, variable.name);
    if (variable.name.endsWith('_BYTES')) t.match(variable.type, /\(bytes/, variable.name);
  }
});
