import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, from this compiled file (dist/test/support/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The README's text. */
export const readme = readFileSync(resolve(REPO_ROOT, 'README.md'), 'utf8');

/** The text of README section `## title`, up to the next `## `. */
export function readmeSection(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of `lang` in `text`, in order. */
export function codeBlocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => m[1]!,
  );
}

/** The command lines of a shell block: each line without its comment, blank ones left out. */
export function commandLines(block: string): string[] {
  return block
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** The text of `docs/<file>`. */
export function docText(file: string): string {
  return readFileSync(resolve(REPO_ROOT, 'docs', file), 'utf8');
}

/** The text of section `## title` of `docs/<file>`, up to the next `## `. */
export function docSection(file: string, title: string): string {
  const text = docText(file);
  const start = text.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`docs/${file} has no "## ${title}" section`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}
