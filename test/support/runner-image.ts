import { readFileSync } from 'node:fs';
import { REPO_ROOT } from './readme.js';

/**
 * The programs the `runner` target of deploy/Dockerfile declares in its
 * `memql.runner.programs` label: what the docker runner adds to the allowlist.
 */
export function runnerImageLabelPrograms(): string[] {
  const dockerfile = readFileSync(`${REPO_ROOT}/deploy/Dockerfile`, 'utf8');
  const runner = dockerfile.slice(dockerfile.indexOf(' AS runner'));
  const stage = runner.slice(0, runner.indexOf('\nFROM '));
  const m = /memql\.runner\.programs="([^"]*)"/.exec(stage);
  if (m === null) throw new Error('the runner target of deploy/Dockerfile declares no programs');
  return m[1]!.split(/\s+/).filter((n) => n !== '');
}
