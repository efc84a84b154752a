/**
 * Sampling and reporting for `npm run bench`: variants sampled interleaved, rows of
 * the results table, and the table as text and Markdown.
 *
 * @module
 */

import { interleavedOrder, ratio, type Summary, summarize } from './stats.js';

/** One variant of an interleaved measurement: what one sample runs. */
export interface Variant {
  name: string;
  /** Runs before each sample, untimed (e.g. the command whose sync is measured). */
  before?: () => Promise<void>;
  /**
   * Runs once per sample; the harness times it. A variant that does untimed
   * bookkeeping after its work returns its own measure (ms) instead.
   */
  run: () => Promise<unknown>;
}

/** Options of {@link sampleInterleaved}. */
export interface SampleOptions {
  /** Samples kept per variant. */
  samples: number;
  /** Untimed rounds first (JIT, caches, connection pools). */
  warmup?: number;
}

/**
 * Times each variant `samples` times, interleaved (see {@link interleavedOrder}), after
 * `warmup` untimed rounds. Returns milliseconds per sample, one array per variant.
 */
export async function sampleInterleaved(
  variants: readonly Variant[],
  options: SampleOptions,
): Promise<number[][]> {
  const out = variants.map(() => [] as number[]);
  for (const i of interleavedOrder(variants.length, options.warmup ?? 0)) {
    await variants[i]?.before?.();
    await variants[i]?.run();
  }
  for (const i of interleavedOrder(variants.length, options.samples)) {
    const variant = variants[i];
    if (!variant) continue;
    await variant.before?.();
    const start = performance.now();
    const own = await variant.run();
    out[i]?.push(typeof own === 'number' ? own : performance.now() - start);
  }
  return out;
}

/** One line of the results table. */
export interface Row {
  /** Case number and short name, e.g. `1 exec in-process`. */
  case: string;
  subject: string;
  baseline: string;
  /** Unit of the figures: `ms`, `cmd/s`, `MiB`, ... */
  unit: string;
  subjectStats: Summary | null;
  baselineStats: Summary | null;
  /** What the target compares (subject/baseline median by default), or null when none. */
  ratio: number | null;
  /** The target in words, e.g. `p50 ratio <= 1.25`. */
  target: string;
  /** Whether the target holds; null when there is no target or the case did not run. */
  holds: boolean | null;
  /** Anything the reader needs: assertions checked, phase timings, why a case did not run. */
  note?: string;
}

/**
 * A row comparing two series by their medians; `holds` is `check(ratio, subject,
 * baseline)` (null: no target).
 */
export function ratioRow(
  base: Pick<Row, 'case' | 'subject' | 'baseline' | 'unit' | 'target' | 'note'>,
  subject: readonly number[],
  baseline: readonly number[],
  check: ((r: number, s: Summary, b: Summary) => boolean) | null,
): Row {
  const s = summarize(subject);
  const b = summarize(baseline);
  const r = ratio(s.median, b.median);
  return {
    ...base,
    subjectStats: s,
    baselineStats: b,
    ratio: r,
    holds: check === null || Number.isNaN(r) ? null : check(r, s, b),
  };
}

/** A row for a case that could not run here, saying why. */
export function skippedRow(caseName: string, reason: string): Row {
  return {
    case: caseName,
    subject: '-',
    baseline: '-',
    unit: '-',
    subjectStats: null,
    baselineStats: null,
    ratio: null,
    target: '-',
    holds: null,
    note: `did not run: ${reason}`,
  };
}

function fmt(x: number | undefined | null): string {
  if (x === undefined || x === null || Number.isNaN(x)) return '-';
  const a = Math.abs(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

/** The table's columns, as strings, one array per row (header first). */
export function tableCells(rows: readonly Row[]): string[][] {
  const head = [
    'case',
    'subject',
    'baseline',
    'unit',
    'median',
    'p95',
    'p99',
    'base median',
    'base p95',
    'base p99',
    'ratio',
    'target',
    'holds?',
  ];
  const body = rows.map((r) => [
    r.case,
    r.subject,
    r.baseline,
    r.unit,
    fmt(r.subjectStats?.median),
    fmt(r.subjectStats?.p95),
    fmt(r.subjectStats?.p99),
    fmt(r.baselineStats?.median),
    fmt(r.baselineStats?.p95),
    fmt(r.baselineStats?.p99),
    fmt(r.ratio),
    r.target,
    r.holds === null ? (r.note?.startsWith('did not run') ? 'n/a' : '-') : r.holds ? 'yes' : 'NO',
  ]);
  return [head, ...body];
}

/** The table as aligned plain text, notes after it. */
export function textTable(rows: readonly Row[]): string {
  const cells = tableCells(rows);
  const widths = cells[0]?.map((_, i) => Math.max(...cells.map((c) => (c[i] ?? '').length))) ?? [];
  const lines = cells.map((c) =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const notes = rows.filter((r) => r.note).map((r) => `  [${r.case}] ${r.subject}: ${r.note}`);
  return [...lines, '', 'notes:', ...notes].join('\n');
}

/** The table as Markdown, notes as a list after it. */
export function markdownTable(rows: readonly Row[]): string {
  const cells = tableCells(rows);
  const esc = (v: string) => v.replaceAll('|', '\\|');
  const lines = cells.map((c) => `| ${c.map(esc).join(' | ')} |`);
  lines.splice(1, 0, `|${cells[0]?.map(() => '---').join('|')}|`);
  const notes = rows.filter((r) => r.note).map((r) => `- **${r.case}**, ${r.subject}: ${r.note}`);
  return [...lines, '', ...notes].join('\n');
}
