import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A stand-in for the internet, on loopback: one HTTPS server, with a certificate from a
 * test CA made here, answering for several names (the tests map them to 127.0.0.1
 * through the resolver the proxy is given). It serves what an agent's ordinary work
 * fetches: a Python package index with one wheel, an npm registry with one package, a
 * git repository (the dumb HTTP protocol), and a blob of a given size.
 *
 * | name | serves |
 * |---|---|
 * | `pypi.test` | `/simple/memql-probe/` and its wheel: `pip install --index-url https://pypi.test/simple memql-probe` |
 * | `registry.test` | `/memql-probe` (the packument) and its tarball: `npm install --registry https://registry.test memql-probe` |
 * | `git.test` | `/probe.git`: `git clone https://git.test/probe.git` |
 * | `blobs.test` | `/blob`: `size` random bytes |
 *
 * Every request is recorded (`requests`), host, path and credential, so a test can tell what reached
 * it. Made with real tools: `openssl` for the CA, `npm pack`, `git`, and Python's
 * `zipfile` for the wheel.
 */
export interface TestInternet {
  readonly port: number;
  /** The names it answers for. */
  readonly names: readonly string[];
  /** PEM of the CA that signed its certificate. */
  readonly caPem: string;
  /** Where `caPem` is, as a file. */
  readonly caPath: string;
  /** The blob `blobs.test/blob` serves. */
  readonly blob: Buffer;
  readonly requests: InternetRequest[];
  close(): Promise<void>;
}

/** A request the stand-in internet received: host, path, and the credential it carried. */
export interface InternetRequest {
  readonly host: string;
  readonly path: string;
  /** The `authorization` header, when one came (a secret the proxy added). */
  readonly authorization?: string;
}

export const TEST_INTERNET_NAMES = ['pypi.test', 'registry.test', 'git.test', 'blobs.test'];

/** The package every index serves. */
export const PROBE_PACKAGE = 'memql-probe';

async function makeCertificates(dir: string, names: readonly string[]) {
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    ca,
    '-days',
    '2',
    '-subj',
    '/CN=memql test internet CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const cert = join(dir, 'server.pem');
  const ext = join(dir, 'server.ext');
  await writeFile(
    ext,
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`,
  );
  await run('openssl', [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    csr,
    '-subj',
    `/CN=${names[0]}`,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
    '-extfile',
    ext,
  ]);
  return { ca, key: await readFile(key), cert: await readFile(cert) };
}

const WHEEL_SCRIPT = `
import base64, hashlib, sys, zipfile
out, name, version = sys.argv[1:4]
mod = name.replace('-', '_')
info = f"{mod}-{version}.dist-info"
files = {
    f"{mod}/__init__.py": "GREETING = 'hello from the test index'\\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: memql-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
for path, text in files.items():
    data = text.encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append(f"{path},sha256={digest},{len(data)}")
record.append(f"{info}/RECORD,,")
files[f"{info}/RECORD"] = "\\n".join(record) + "\\n"
with zipfile.ZipFile(out, "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
`;

async function makeWheel(dir: string) {
  const file = `${PROBE_PACKAGE.replace('-', '_')}-1.0-py3-none-any.whl`;
  await run('/usr/bin/python3', ['-c', WHEEL_SCRIPT, join(dir, file), PROBE_PACKAGE, '1.0']);
  return { file, bytes: await readFile(join(dir, file)) };
}

async function makeTarball(dir: string) {
  const src = join(dir, 'npm-src');
  await mkdir(src);
  await writeFile(
    join(src, 'package.json'),
    JSON.stringify({ name: PROBE_PACKAGE, version: '1.0.0', main: 'index.js' }),
  );
  await writeFile(join(src, 'index.js'), "module.exports = 'hello from the test registry';\n");
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: src });
  const packed = (JSON.parse(stdout) as { filename: string }[])[0]!.filename;
  return { file: packed, bytes: await readFile(join(dir, packed)) };
}

async function makeRepository(dir: string) {
  const work = join(dir, 'git-work');
  const bare = join(dir, 'probe.git');
  const git = (cwd: string, ...args: string[]) =>
    run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd });
  await mkdir(work);
  await git(work, 'init', '-q', '-b', 'main');
  await writeFile(join(work, 'README'), 'a repository served by the test internet\n');
  await git(work, 'add', 'README');
  await git(work, 'commit', '-q', '-m', 'first');
  await git(dir, 'clone', '-q', '--bare', work, bare);
  await git(bare, 'update-server-info');
  return bare;
}

/** Starts the stand-in; `blobBytes` is the size of `blobs.test/blob` (default 1 MiB). */
export async function startTestInternet(
  options: { blobBytes?: number } = {},
): Promise<TestInternet> {
  const dir = await mkdtemp(join(tmpdir(), 'memql-internet-'));
  const names = TEST_INTERNET_NAMES;
  const certs = await makeCertificates(dir, names);
  const wheel = await makeWheel(dir);
  const tarball = await makeTarball(dir);
  const repo = await makeRepository(dir);
  const blob = randomBytes(options.blobBytes ?? 1 << 20);
  const requests: InternetRequest[] = [];
  let port = 0;
  const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const packument = () => ({
    name: PROBE_PACKAGE,
    'dist-tags': { latest: '1.0.0' },
    versions: {
      '1.0.0': {
        name: PROBE_PACKAGE,
        version: '1.0.0',
        dist: {
          tarball: `https://registry.test:${port}/${PROBE_PACKAGE}/-/${tarball.file}`,
          shasum: createHash('sha1').update(tarball.bytes).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(tarball.bytes).digest('base64')}`,
        },
      },
    },
  });
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = (req.url ?? '/').split('?')[0]!;
    const authorization = req.headers.authorization;
    requests.push({ host, path, ...(authorization !== undefined ? { authorization } : {}) });
    const send = (status: number, body: Buffer | string, type = 'application/octet-stream') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (host === 'pypi.test' && path === `/simple/${PROBE_PACKAGE}/`) {
      const href = `../../files/${wheel.file}#sha256=${sha256(wheel.bytes)}`;
      return send(
        200,
        `<!DOCTYPE html><html><body><a href="${href}">${wheel.file}</a></body></html>`,
        'text/html',
      );
    }
    if (host === 'pypi.test' && path === `/files/${wheel.file}`) return send(200, wheel.bytes);
    if (host === 'registry.test' && path === `/${PROBE_PACKAGE}`) {
      return send(200, JSON.stringify(packument()), 'application/json');
    }
    if (host === 'registry.test' && path === `/${PROBE_PACKAGE}/-/${tarball.file}`) {
      return send(200, tarball.bytes);
    }
    if (host === 'git.test' && path.startsWith('/probe.git/')) {
      const rel = normalize(path.slice('/probe.git/'.length));
      if (rel.startsWith('..')) return send(404, 'not found');
      return readFile(join(repo, rel)).then(
        (bytes) => send(200, bytes),
        () => send(404, 'not found'),
      );
    }
    if (host === 'blobs.test' && path === '/blob') return send(200, blob);
    return send(404, 'not found', 'text/plain');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  const caPath = join(dir, 'ca.pem');
  return {
    port,
    names,
    caPem: await readFile(caPath, 'utf8'),
    caPath,
    blob,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
