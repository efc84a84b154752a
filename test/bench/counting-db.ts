/**
 * A `Db` that passes every statement through and counts it, with its time, by a short
 * label (the first words of the SQL and the table), so a case can say which
 * statements a gap is made of.
 *
 * @module
 */

import type { Db, Queryable, Row } from '../../src/store/index.js';

/** Count and summed milliseconds of one kind of statement. */
export interface StatementTally {
  count: number;
  ms: number;
}

/**
 * `insert into audit_event`, `update workspace_command`, `select count`, ...; a
 * statement with data-modifying CTEs is labelled by every write it makes
 * (`update workspace_command + insert into audit_event`).
 */
export function statementLabel(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim().toLowerCase();
  if (s.startsWith('with ')) {
    // Named by its first data-modifying CTE: `claimed: update workspace_command + ...`.
    const name = /\b([a-z_]+) as \( ?(?:insert into|update|delete from) /.exec(s)?.[1];
    const writes = [...s.matchAll(/\b(?<!for )(insert into|update|delete from) ([a-z_]+)/g)].map(
      (w) => `${w[1]} ${w[2]}`,
    );
    const notify = s.includes('pg_notify(') ? ' + notify (if another node may claim)' : '';
    if (writes.length > 0) return `${name ? `${name}: ` : ''}${writes.join(' + ')}${notify}`;
  }
  const m =
    /^(insert into|update|delete from) ([a-z_]+)/.exec(s) ??
    /^(select) .*? from ([a-z_]+)/.exec(s) ??
    /^([a-z]+)/.exec(s);
  const verb = m?.[1] === 'select' && s.includes('count(') ? 'select count' : m?.[1];
  return m ? [verb, m[2]].filter(Boolean).join(' ') : s.slice(0, 30);
}

/** Wraps `db`; `tallies` accumulates until `reset()`. */
export function countingDb(db: Db): {
  db: Db;
  tallies: Map<string, StatementTally>;
  reset(): void;
} {
  const tallies = new Map<string, StatementTally>();
  const timed = async <T>(sql: string, fn: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await fn();
    } finally {
      const label = statementLabel(sql);
      const t = tallies.get(label) ?? { count: 0, ms: 0 };
      t.count += 1;
      t.ms += performance.now() - start;
      tallies.set(label, t);
    }
  };
  const wrap = (q: Queryable): Queryable => ({
    query: <T extends Row = Row>(text: string, params?: readonly unknown[]) =>
      timed(text, () => q.query<T>(text, params)),
    execute: (text, params) => timed(text, () => q.execute(text, params)),
    script: (text) => timed(text, () => q.script(text)),
  });
  const wrapped: Db = {
    kind: db.kind,
    ...wrap(db),
    transaction: (fn) => timed('transaction', () => db.transaction((tx) => fn(wrap(tx)))),
    ...(db.listen ? { listen: db.listen } : {}),
    close: () => db.close(),
  };
  return { db: wrapped, tallies, reset: () => tallies.clear() };
}

/** `12.0 x insert audit_event (3.1 ms), ...` per unit of work, most frequent first. */
export function describeTallies(tallies: Map<string, StatementTally>, per: number): string {
  return [...tallies.entries()]
    .sort((a, b) => b[1].count - a[1].count)
    .map(
      ([label, t]) =>
        `${(t.count / per).toFixed(1)} x ${label} (${(t.ms / t.count).toFixed(2)} ms each)`,
    )
    .join(', ');
}
