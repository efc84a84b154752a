import { randomBytes } from 'node:crypto';
import t from 'tap';
import { docker, dockerOk, image, requireImages } from './containers.js';

/**
 * The `runner` image, run as the docker runner runs commands: uid 10001, no network,
 * a read-only root with a tmpfs at /tmp, no capabilities. Script-first document and
 * image work needs no install at command time, and a secret in the container's
 * environment is out of a command's reach through /proc/1/environ.
 */

t.setTimeout(600_000);
await requireImages(['runner']);
const runner = image('runner');

function sandboxed(script: string, extra: readonly string[] = []) {
  return docker([
    'run',
    '--rm',
    '--network',
    'none',
    '--user',
    '10001:10001',
    '--read-only',
    '--tmpfs',
    '/tmp:rw,nosuid,nodev,size=268435456',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    ...extra,
    runner,
    '/bin/bash',
    '-c',
    script,
  ]);
}

const labels = JSON.parse(
  await dockerOk(['image', 'inspect', '--format', '{{json .Config.Labels}}', runner]),
) as Record<string, string>;

t.test('Python document libraries import', async (t) => {
  const r = await sandboxed(
    `python3 -c 'import docx, openpyxl, pypdf, reportlab, PIL, lxml; print("ok")'`,
  );
  t.equal(r.stdout.trim(), 'ok', r.stderr);
  const pip = labels['memql.runner.pip-packages'] ?? '';
  if (pip.includes('python-pptx')) {
    const pptx = await sandboxed(`python3 -c 'import pptx; print(pptx.__version__)'`);
    t.equal(pptx.code, 0, pptx.stderr);
  } else {
    // scripts/setup/install-images.sh builds with no package index reachable (none is from these
    // machines); the label says so, and the default build installs python-pptx.
    t.comment('import pptx: not checked; this image was built without its pip packages');
    t.equal(pip, '', 'the label says the build had no pip packages');
  }
});

t.test('a generated document converts to PDF with LibreOffice, and back to text', async (t) => {
  const r = await sandboxed(
    [
      'set -e; mkdir -p /tmp/w; cd /tmp/w',
      `python3 -c 'import docx; d = docx.Document(); d.add_heading("Kestrel report", 1); d.add_paragraph("Wrens: 4"); d.save("report.docx")'`,
      'soffice --headless --convert-to pdf --outdir /tmp/w report.docx >/dev/null 2>&1',
      'pdftotext report.pdf -',
      `python3 -c 'import openpyxl; wb = openpyxl.Workbook(); wb.active["A1"] = 41; wb.active["A2"] = "=A1+1"; wb.save("t.xlsx"); print("xlsx", openpyxl.load_workbook("t.xlsx").active["A1"].value)'`,
    ].join('\n'),
  );
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /Kestrel report/);
  t.match(r.stdout, /Wrens: 4/);
  t.match(r.stdout, /xlsx 41/);
});

t.test('ImageMagick converts an image', async (t) => {
  const r = await sandboxed(
    "set -e; cd /tmp; convert -size 32x16 xc:orange a.png; convert a.png a.jpg; identify -format '%w %h %m' a.jpg",
  );
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout.trim(), '32 16 JPEG');
});

t.test('every program the image declares for the allowlist is in it', async (t) => {
  const declared = (labels['memql.runner.programs'] ?? '').split(/\s+/).filter((n) => n !== '');
  t.ok(
    declared.includes('soffice') && declared.includes('pdftoppm') && declared.includes('convert'),
  );
  const r = await sandboxed(
    `for p in ${declared.join(' ')}; do command -v "$p" >/dev/null || echo "missing $p"; done`,
  );
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, '', 'none missing');
});

t.test('uid 10001 cannot read the environment of process 1', async (t) => {
  const canary = `canary-${randomBytes(8).toString('hex')}`;
  const r = await sandboxed(
    'id -u; cat /proc/1/environ; echo "rc=$?"; tr "\\0" "\\n" < /proc/$$/environ | grep -c CANARY_SECRET',
    ['-e', `CANARY_SECRET=${canary}`],
  );
  const [uid, ...rest] = r.stdout.trim().split('\n');
  t.equal(uid, '10001');
  t.match(r.stderr, /\/proc\/1\/environ: Permission denied/);
  t.ok(rest.includes('rc=1'), 'cat failed');
  t.notMatch(r.stdout, canary, 'the secret was not printed from process 1');
  t.equal(rest.at(-1), '1', 'the check is real: the command itself does carry the variable');
});

t.test('process 1 forwards exit codes and signals', async (t) => {
  t.equal((await sandboxed('exit 7')).code, 7);
  t.equal((await sandboxed('kill -KILL $$')).code, 137);
  const missing = await docker(['run', '--rm', '--network', 'none', runner, 'no-such-command']);
  t.equal(missing.code, 127);
});

t.test('none of our code, no deployment settings', async (t) => {
  const r = await sandboxed(
    'ls -d /app /workspace/node_modules 2>&1; env | grep -c "^MEMQL_" || true',
  );
  t.match(r.stdout, /'\/app': No such file or directory/);
  t.equal(r.stdout.trim().split('\n').at(-1), '0', 'no MEMQL_ variable in the image');
  const env = JSON.parse(
    await dockerOk(['image', 'inspect', '--format', '{{json .Config.Env}}', runner]),
  ) as string[];
  t.same(
    env.filter((e) => /SECRET|TOKEN|PASSWORD|KEY|MEMQL_/i.test(e.split('=')[0] ?? '')),
    [],
    'no secret-looking variable in the image',
  );
});
