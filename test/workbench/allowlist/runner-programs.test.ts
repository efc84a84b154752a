import t from 'tap';
import { EXEC_PROGRAMS_SUMMARY, EXEC_SUMMARY_PROGRAMS } from '../../../src/contract/index.js';
import {
  createCommandChecker,
  DEFAULT_ALLOWED_PROGRAMS,
  denialPayload,
  FORBIDDEN_BUILTINS,
  renderAllowlistTable,
  SHELLS,
  UNCHECKED_WRAPPERS,
} from '../../../src/workbench/allowlist/index.js';
import { runnerImageLabelPrograms } from '../../support/runner-image.js';

/**
 * The allowlist follows the runner: the programs a runner image declares are allowed
 * for commands run on it (never a shell or an unchecked wrapper, whatever it
 * declares), their dangerous arguments are refused, and the allowlist is published as
 * a table, a one-line summary and the `command_not_allowed` payload, none of which
 * can name a program the checker would refuse.
 */

const imagePrograms = runnerImageLabelPrograms();
const base = await createCommandChecker();
const docker = await createCommandChecker({
  runnerPrograms: [...imagePrograms, 'bash', 'sudo', 'a b'],
});

const outcome = (checker: typeof base, command: string) => {
  const r = checker.check(command);
  return r.ok ? 'ok' : [r.reason, r.name];
};

t.test('the runner image declares the document tools', async (t) => {
  for (const name of ['soffice', 'pdftoppm', 'pdftotext', 'convert', 'identify']) {
    t.ok(imagePrograms.includes(name), name);
  }
});

t.test("the runner's programs are allowed on it, and only there", async (t) => {
  for (const command of [
    'soffice --headless --convert-to pdf --outdir out report.docx',
    'pdftoppm -png -r 50 -singlefile out/report.pdf out/page',
    'pdftotext out/report.pdf -',
    'convert out/page.png -resize 50% out/small.jpg && identify out/small.jpg',
  ]) {
    t.equal(outcome(docker, command), 'ok', command);
    t.not(outcome(base, command), 'ok', `${command}: refused on a runner without them`);
  }
  t.same(outcome(base, 'soffice --version'), ['not_allowed', 'soffice']);
  t.same(outcome(docker, 'bash -c id'), ['not_allowed', 'bash'], 'a declared shell stays out');
  t.same(outcome(docker, 'sudo id'), ['wrapper', 'sudo']);
  t.same(docker.refusedRunnerPrograms.length, 3, 'bash, sudo and "a b" are left out');
  t.match(docker.refusedRunnerPrograms.join('\n'), /"bash" can never be allowed/);
  t.match(docker.refusedRunnerPrograms.join('\n'), /"a b" is not a plain program name/);
});

t.test('document tools: the arguments that run commands are refused', async (t) => {
  for (const [command, name] of [
    ["convert '|sh -c id' out.png", "'|sh -c id'"],
    ["convert 'png:|id' out.png", "'png:|id'"],
    ['convert @names.txt out.pdf', '@names.txt'],
    ["identify '|id'", "'|id'"],
    ["mogrify -format jpg '|id'", "'|id'"],
    ['soffice --headless macro:///Standard.Module1.Run', 'macro:///Standard.Module1.Run'],
    [
      "soffice 'vnd.sun.star.script:a.b?language=Basic'",
      "'vnd.sun.star.script:a.b?language=Basic'",
    ],
  ] as const) {
    t.same(outcome(docker, command), ['unsafe_argument', name], command);
  }
  t.equal(
    outcome(docker, "convert -size 8x8 xc:orange 'a|b.png'"),
    'ok',
    'a | inside a name is a name',
  );
  t.equal(outcome(docker, "convert label:'@ 2 pm' out.png"), 'ok', 'text after a coder is text');
});

t.test('the refusal lists every program allowed where the command would run', async (t) => {
  const r = docker.check('perl -e 1');
  if (r.ok) throw new Error('expected a refusal');
  const payload = denialPayload(r, docker);
  t.equal(payload.reason, 'not_allowed');
  t.match(r.message, 'the payload lists them');
  t.same(payload.allowed, [...docker.allowed].sort());
  for (const name of ['ls', 'python3', 'soffice', 'pdftoppm', 'convert']) {
    t.ok(payload.allowed.includes(name), name);
  }
  for (const name of ['bash', 'sudo', 'eval', 'perl'])
    t.notOk(payload.allowed.includes(name), name);
  const plain = base.check('soffice');
  if (plain.ok) throw new Error('expected a refusal');
  t.notOk(denialPayload(plain, base).allowed.includes('soffice'), 'bwrap keeps its list');
});

t.test('the one-line summary names nothing the allowlist refuses', async (t) => {
  for (const name of EXEC_SUMMARY_PROGRAMS.allowed) {
    t.ok(DEFAULT_ALLOWED_PROGRAMS.includes(name), `${name} is allowed everywhere`);
  }
  for (const name of EXEC_SUMMARY_PROGRAMS.runnerImage) {
    t.ok(imagePrograms.includes(name), `${name} is declared by the runner image`);
  }
  const never = [...SHELLS, ...FORBIDDEN_BUILTINS, ...UNCHECKED_WRAPPERS];
  for (const name of EXEC_SUMMARY_PROGRAMS.never)
    t.ok(never.includes(name), `${name} is never allowed`);
  for (const name of [
    ...EXEC_SUMMARY_PROGRAMS.allowed,
    ...EXEC_SUMMARY_PROGRAMS.runnerImage,
    ...EXEC_SUMMARY_PROGRAMS.never,
  ]) {
    t.match(EXEC_PROGRAMS_SUMMARY, name);
  }
  t.match(EXEC_PROGRAMS_SUMMARY, 'command_not_allowed');
});

t.test(
  'the table lists every group, the runner image row, the rules and the never-lists',
  async (t) => {
    const table = renderAllowlistTable({ runnerImagePrograms: imagePrograms });
    t.match(table, /^\| Programs \| Names \|\n\| --- \| --- \|\n/);
    for (const name of [...DEFAULT_ALLOWED_PROGRAMS, ...imagePrograms]) {
      t.ok(table.includes(`\`${name}\``), name);
    }
    for (const name of [...SHELLS, ...FORBIDDEN_BUILTINS, ...UNCHECKED_WRAPPERS]) {
      t.match(table, `\`${name}\``);
    }
    t.match(table, '| Document tools: the docker runner');
    t.match(table, /\| Never: shells \| `sh` `bash`/);
    t.notMatch(renderAllowlistTable(), 'Document tools', 'no image, no image row');
    t.notMatch(renderAllowlistTable(), '`convert`', 'nor its programs among the ruled ones');
    t.notMatch(table, '`magick`', 'a rule for a program no runner offers is not listed');
    for (const line of table.split('\n').filter((l) => l !== '')) {
      t.equal(line.replaceAll('\\|', '').split('|').length, 4, `two cells: ${line.slice(0, 40)}`);
    }
    t.equal(table.split('\n').filter((l) => l.startsWith('| ')).length, 2 + 7 + 1 + 2 + 3);
  },
);
