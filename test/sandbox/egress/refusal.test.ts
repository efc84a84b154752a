import t from 'tap';
import {
  type RefusalReason,
  refusalBody,
  refusalPhrase,
  refusalResponse,
  refusalStatus,
} from '../../../src/sandbox/egress/refusal.js';
import { RefusalLog } from '../../../src/sandbox/egress/refusal-log.js';

// What a refused client reads, and the run's refusal log.

const REASONS: [RefusalReason, number, RegExp][] = [
  [
    'not_allowed',
    403,
    /PUT \/v1\/runs\/run-9\/network.*memql network allow.*MEMQL_EGRESS_CEILING/s,
  ],
  ['port_not_allowed', 403, /MEMQL_EGRESS_CEILING/],
  ['ip_literal', 403, /host name/],
  ['not_a_name', 403, /host name/],
  ['address_blocked', 403, /MEMQL_FETCH_ALLOW_PRIVATE\), never cloud metadata/],
  ['sni_mismatch', 403, /TLS server name/],
  ['not_tls', 403, /TLS only/],
  ['host_mismatch', 403, /Host header/],
  ['bad_request', 400, /absolute-URI/],
  ['dns_failed', 502, /host name/],
  ['upstream_failed', 502, /try again/],
];

t.test(
  'each reason: its status, and a body naming host, port, reason and what to do',
  async (t) => {
    for (const [reason, status, remedy] of REASONS) {
      const refusal = { host: 'pkgs.test', port: 443, reason, detail: 'what happened' };
      t.equal(refusalStatus(reason), status, reason);
      const body = refusalBody(refusal, 'run-9');
      t.match(body, `refused pkgs.test:443 (${reason}): what happened.\n`);
      t.match(body, remedy, `${reason}: what to do`);
      const raw = refusalResponse(refusal, 'run-9').toString('latin1');
      t.match(
        raw,
        new RegExp(
          `^HTTP/1\\.1 ${status} memql egress refused pkgs\\.test:443 \\(${reason}\\)\\r\\n`,
        ),
      );
      t.match(raw, `x-memql-egress: refused; reason=${reason}\r\n`);
      t.match(raw, `content-length: ${Buffer.byteLength(body)}\r\n`);
    }
  },
);

t.test('the reason phrase cannot break the status line', async (t) => {
  const phrase = refusalPhrase({
    host: 'a\r\nb\u00e9',
    port: 1,
    reason: 'bad_request',
    detail: '',
  });
  t.notMatch(phrase, /[\r\n]/);
  t.match(phrase, /^[\x20-\x7e]+$/);
});

t.test('the refusal log: since a mark, each destination and reason once, bounded', async (t) => {
  const log = new RefusalLog(3);
  log.add({ host: 'a.test', port: 443, reason: 'not_allowed' });
  const mark = log.mark();
  log.add({ host: 'b.test', port: 443, reason: 'not_allowed' });
  log.add({ host: 'b.test', port: 443, reason: 'not_allowed' });
  log.add({ host: 'b.test', port: 80, reason: 'not_allowed' });
  t.same(log.since(mark), [
    { host: 'b.test', port: 443, reason: 'not_allowed' },
    { host: 'b.test', port: 80, reason: 'not_allowed' },
  ]);
  t.same(log.since(log.mark()), []);
  t.same(
    log.since(0).map((e) => e.host),
    ['b.test', 'b.test'],
    'only the newest 3 are kept',
  );
});
