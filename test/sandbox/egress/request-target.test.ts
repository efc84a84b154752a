import t from 'tap';
import { endToEndHeaders, endToEndRaw } from '../../../src/sandbox/egress/hop-headers.js';
import {
  hostHeaderAgrees,
  parseAbsoluteHttp,
  parseAuthority,
} from '../../../src/sandbox/egress/request-target.js';

// Request targets parsed by hand, exactly as sent: no URL parser rewriting the host.

t.test('authority form (CONNECT)', async (t) => {
  const rows: [string, unknown][] = [
    ['pkgs.test:443', { host: 'pkgs.test', port: 443 }],
    ['[::1]:443', { host: '[::1]', port: 443 }],
    ['0x7f.1:80', { host: '0x7f.1', port: 80 }],
    ['pkgs.test', { problem: 'the target has no port (CONNECT host:port)' }],
    ['pkgs.test:', { problem: 'the target has no port (CONNECT host:port)' }],
    ['pkgs.test:0', { problem: 'the port is not 1 to 65535' }],
    ['pkgs.test:65536', { problem: 'the port is not 1 to 65535' }],
    ['pkgs.test:000443', { problem: 'the port is not 1 to 65535' }],
    ['a@pkgs.test:443', { problem: 'the target carries credentials (user@host)' }],
    [':443', { problem: 'the target is not host:port' }],
    ['::1:443', { problem: 'the target is not host:port' }],
  ];
  for (const [text, expected] of rows) t.same(parseAuthority(text, null), expected, text);
  t.same(parseAuthority('pkgs.test', 80), { host: 'pkgs.test', port: 80 });
});

t.test('absolute form (plain HTTP)', async (t) => {
  const rows: [string, unknown][] = [
    ['http://pkgs.test/simple/', { host: 'pkgs.test', port: 80, path: '/simple/' }],
    ['HTTP://pkgs.test:8080', { host: 'pkgs.test', port: 8080, path: '/' }],
    ['http://pkgs.test?q=1', { host: 'pkgs.test', port: 80, path: '/?q=1' }],
    ['http://pkgs.test/a/../b%2F?x#frag', { host: 'pkgs.test', port: 80, path: '/a/../b%2F?x' }],
    ['http://[::1]:8080/', { host: '[::1]', port: 8080, path: '/' }],
  ];
  for (const [text, expected] of rows) t.same(parseAbsoluteHttp(text), expected, text);
  const bad: [string, RegExp][] = [
    ['/simple/', /not a proxy request/],
    ['https://pkgs.test/', /through CONNECT/],
    ['ftp://pkgs.test/', /ftp: scheme/],
    ['http://u:p@pkgs.test/', /credentials/],
    ['http:///path', /not host:port/],
  ];
  for (const [text, problem] of bad) t.match(parseAbsoluteHttp(text), { problem }, text);
});

t.test('the Host header agrees when it names the same host and port', async (t) => {
  const rows: [string, string, number, boolean][] = [
    ['pkgs.test', 'pkgs.test', 80, true],
    ['PKGS.test.', 'pkgs.test', 80, true],
    ['pkgs.test:80', 'pkgs.test', 80, true],
    ['pkgs.test:8080', 'pkgs.test', 80, false],
    ['pkgs.test', 'pkgs.test', 8080, false],
    ['evil.test', 'pkgs.test', 80, false],
    ['pkgs.test@evil.test', 'pkgs.test', 80, false],
    ['', 'pkgs.test', 80, false],
  ];
  for (const [header, host, port, agrees] of rows) {
    t.equal(hostHeaderAgrees(header, host, port, 80), agrees, `${header} vs ${host}:${port}`);
  }
});

t.test('hop-by-hop headers stay on their hop', async (t) => {
  const raw = [
    'Host',
    'pkgs.test',
    'Connection',
    'keep-alive, X-Hop',
    'X-Hop',
    '1',
    'Proxy-Authorization',
    'Basic abc',
    'Proxy-Connection',
    'keep-alive',
    'Accept',
    'a',
    'accept',
    'b',
    'Authorization',
    'client',
    'Transfer-Encoding',
    'chunked',
  ];
  t.same(endToEndHeaders(raw, ['host', 'authorization']), { accept: ['a', 'b'] });
  t.same(
    endToEndRaw(raw, (n) => n !== 'authorization'),
    ['Host', 'pkgs.test', 'Accept', 'a', 'accept', 'b'],
  );
});
