import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  bearerToken,
  describeReleaseReason,
  ensureDevToken,
  matchRoute,
  RELEASE_REASON_TEXT,
} from '../../src/api/index.js';
import { contentDisposition, parseRange } from '../../src/api/read-routes.js';
import { openDb, resolveApiToken } from '../../src/store/index.js';
import { contentTypeFor } from '../../src/workbench/actions/index.js';
import { createTestDatabase } from '../support/postgres.js';

t.test(
  'bearer tokens are read from the Authorization header only in the Bearer scheme',
  async (t) => {
    const cases: [string | undefined, string | null][] = [
      [undefined, null],
      ['', null],
      ['Bearer', null],
      ['Bearer ', null],
      ['Bearer mqt_abc', 'mqt_abc'],
      ['bearer mqt_abc', 'mqt_abc'],
      ['Bearer   mqt_abc  ', 'mqt_abc'],
      ['Bearer a b', null],
      ['Basic mqt_abc', null],
      ['Bearer mqt_\u00e9', null],
    ];
    for (const [header, want] of cases) t.equal(bearerToken(header), want, String(header));
  },
);

t.test('every release reason has words; node_lost says what happened', async (t) => {
  t.equal(describeReleaseReason('node_lost'), 'replica lost; another replica took over');
  t.equal(describeReleaseReason('run_failed'), 'run ended: failed');
  t.equal(describeReleaseReason(null), null);
  t.equal(
    describeReleaseReason('something_new'),
    'something_new',
    'unknown reasons are shown as is',
  );
  for (const [reason, text] of Object.entries(RELEASE_REASON_TEXT)) {
    t.ok(text.length > 0 && text !== reason, reason);
  }
});

t.test('routes match by method and path; ids are decoded', async (t) => {
  const run = matchRoute('GET', '/v1/runs/run-1');
  t.ok(run && 'handler' in run);
  t.same(run && 'params' in run ? run.params : null, ['run-1']);
  const end = matchRoute('POST', '/v1/runs/run%2D2/end');
  t.same(end && 'params' in end ? end.params : null, ['run-2']);
  t.same(matchRoute('PUT', '/v1/runs/run-1'), { allowed: ['GET', 'DELETE'] });
  t.equal(matchRoute('GET', '/v1/runs/a/b'), null);
  t.equal(matchRoute('GET', '/v1/artifacts/%E0%A4%A/content'), null, 'bad escapes match nothing');
  t.equal(matchRoute('GET', '/v1/workspace/files'), null);
});

t.test('downloads name the file safely', async (t) => {
  t.equal(
    contentDisposition('report.md'),
    `attachment; filename="report.md"; filename*=UTF-8''report.md`,
  );
  t.equal(
    contentDisposition('a"b\\c;d%.txt'),
    `attachment; filename="a_b_c_d_.txt"; filename*=UTF-8''a%22b%5Cc%3Bd%25.txt`,
  );
  t.equal(
    contentDisposition('naïve\r\nx.txt'),
    `attachment; filename="na_ve__x.txt"; filename*=UTF-8''na%C3%AFve%0D%0Ax.txt`,
  );
});

t.test('content types come from the extension, else octet-stream', async (t) => {
  t.equal(contentTypeFor('r.MD'), 'text/markdown; charset=utf-8');
  t.equal(contentTypeFor('a.png'), 'image/png');
  t.equal(
    contentTypeFor('report.docx'),
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  );
  t.equal(
    contentTypeFor('Sheet.XLSX'),
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  );
  t.equal(contentTypeFor('notes.odt'), 'application/vnd.oasis.opendocument.text');
  t.equal(contentTypeFor('data.tar.gz'), 'application/gzip');
  t.equal(contentTypeFor('Makefile'), 'application/octet-stream');
  t.equal(contentTypeFor('x.unknownext'), 'application/octet-stream');
});

t.test(
  'the development token is made once, kept 0600, and registered again after a reset',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'memql-devtoken-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const first = await createTestDatabase();
    t.teardown(() => first.drop());
    const db1 = await openDb({ kind: 'postgres', url: first.url });
    t.teardown(() => db1.close());
    const made = await ensureDevToken(db1, join(dir, 'data'));
    t.equal(made.created, true);
    t.equal(made.userId, 'dev');
    t.equal((await stat(made.file)).mode & 0o777, 0o600);
    t.equal((await readFile(made.file, 'utf8')).trim(), made.token);
    t.equal(await resolveApiToken(db1, made.token), 'dev');
    const again = await ensureDevToken(db1, join(dir, 'data'));
    t.same({ ...again, created: again.created }, { ...made, created: false }, 'reused');

    const second = await createTestDatabase();
    t.teardown(() => second.drop());
    const db2 = await openDb({ kind: 'postgres', url: second.url });
    t.teardown(() => db2.close());
    t.equal(await resolveApiToken(db2, made.token), null);
    const reused = await ensureDevToken(db2, join(dir, 'data'));
    t.equal(reused.token, made.token, 'the saved token survives a database reset');
    t.equal(await resolveApiToken(db2, made.token), 'dev');

    await writeFile(made.file, 'short\n', { mode: 0o644 });
    const replaced = await ensureDevToken(db2, join(dir, 'data'));
    t.equal(replaced.created, true, 'an unusable file is replaced');
    t.equal((await stat(made.file)).mode & 0o777, 0o600);
  },
);

t.test('one byte range is understood; others serve the whole artifact', async (t) => {
  t.equal(parseRange(undefined, 100), null);
  t.same(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  t.same(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  t.same(parseRange('bytes=90-500', 100), { start: 90, end: 99 });
  t.same(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  t.same(parseRange('bytes=-500', 100), { start: 0, end: 99 });
  t.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  t.equal(parseRange('bytes=5-2', 100), 'unsatisfiable');
  t.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
  t.equal(parseRange('bytes=0-1,5-6', 100), null);
  t.equal(parseRange('items=0-1', 100), null);
  t.equal(parseRange('bytes=-', 100), null);
});
