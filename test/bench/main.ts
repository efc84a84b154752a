/**
 * `npm run bench`: runs the cases of issue 7, prints the table and writes it as JSON
 * and Markdown to `bench-results/`.
 *
 *   npm run bench -- --cases=1,4 --size=small
 *
 * `--size=small` shrinks every case for development; the default sizes are the ones
 * in docs/performance.md. A case that cannot run here (no Docker daemon, no Postgres) shows
 * up in the table as not run, with the reason.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { CASES } from './cases/index.js';
import { BenchContext, type BenchSize } from './context.js';
import { markdownTable, type Row, skippedRow, textTable } from './harness.js';

interface Args {
  cases: number[];
  size: BenchSize;
}

function parseArgs(argv: readonly string[]): Args {
  let cases = CASES.map((c) => c.id);
  let size: BenchSize = 'default';
  for (const arg of argv) {
    if (arg.startsWith('--cases=')) {
      cases = arg
        .slice('--cases='.length)
        .split(',')
        .map((s) => Number(s.trim()));
      const unknown = cases.filter((c) => !CASES.some((k) => k.id === c));
      if (unknown.length > 0)
        throw new Error(`unknown case(s) ${unknown.join(', ')}; cases are 1-${CASES.length}`);
    } else if (arg.startsWith('--size=')) {
      const v = arg.slice('--size='.length);
      if (v !== 'small' && v !== 'default') throw new Error('--size is small or default');
      size = v;
    } else throw new Error(`unknown argument ${arg}; use --cases=1,2,... and --size=small|default`);
  }
  return { cases, size };
}

/** nproc, CPU model and memory of this machine. */
function machine(): string {
  let model = 'unknown CPU';
  try {
    model =
      /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model;
  } catch {
    // Not Linux: leave it unknown.
  }
  const gib = (totalmem() / 1024 ** 3).toFixed(1);
  return `${availableParallelism()} CPUs (nproc), ${model}, ${gib} GiB RAM, Node ${process.version}`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const ctx = await BenchContext.create(args.size, process.env);
  const started = new Date();
  const header = [
    `memql-workbench benchmarks, ${started.toISOString()}`,
    `machine: ${machine()}`,
    `database: ${ctx.database.label}`,
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ', ',
      )} (other work on the machine adds noise; every figure is against a baseline sampled alongside it)`,
    `size: ${args.size}; cases: ${args.cases.join(', ')}`,
  ];
  process.stdout.write(`${header.join('\n')}\n\n`);
  const rows: Row[] = [];
  let stopping = false;
  const onSignal = () => {
    stopping = true;
  };
  process.once('SIGINT', onSignal);
  try {
    for (const c of CASES.filter((k) => args.cases.includes(k.id))) {
      if (stopping) break;
      const t0 = performance.now();
      process.stdout.write(`case ${c.id} (${c.name}) ...`);
      let got: Row[];
      try {
        got = await c.run(ctx);
      } catch (err) {
        got = [skippedRow(`${c.id} ${c.name}`, (err as Error).message.split('\n')[0] ?? '')];
      } finally {
        await ctx.endCase();
      }
      rows.push(...got);
      process.stdout.write(` ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    await ctx.close();
  }
  const elapsed = ((Date.now() - started.getTime()) / 1000).toFixed(0);
  const loadEnd = `load average at end: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(', ')}`;
  process.stdout.write(`\n${textTable(rows)}\n\ntotal ${elapsed} s; ${loadEnd}\n`);

  const dir = join(process.cwd(), 'bench-results');
  await mkdir(dir, { recursive: true });
  const stamp = started.toISOString().replaceAll(':', '-').replace(/\..+$/, '');
  const json = JSON.stringify(
    {
      date: started.toISOString(),
      machine: machine(),
      database: ctx.database.kind,
      databaseLabel: ctx.database.label,
      size: args.size,
      elapsedSeconds: Number(elapsed),
      loadAverageEnd: loadavg(),
      rows,
    },
    null,
    2,
  );
  const md = `${header.map((h) => `${h}  `).join('\n')}\n\n${markdownTable(rows)}\n\ntotal ${elapsed} s; ${loadEnd}\n`;
  for (const name of [`bench-${stamp}`, 'latest']) {
    await writeFile(join(dir, `${name}.json`), `${json}\n`);
    await writeFile(join(dir, `${name}.md`), md);
  }
  process.stdout.write(`results: bench-results/bench-${stamp}.{json,md} (and latest.*)\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
