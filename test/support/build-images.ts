import { execFile } from 'node:child_process';

/**
 * Images for the build tests, on the machine's Docker daemon. The runtime image is the
 * `workbench-runtime` target of deploy/Dockerfile (built by
 * scripts/setup/install-images.sh), used as the docker runner's image of a replica that
 * builds. The image without npm is made from it here: the same replica with npm taken
 * out, the way a replica built from the wrong stage lacks its toolchain.
 *
 * @module
 */

/** The runtime image (`MEMQL_TEST_IMAGE_TAG`, default `ci`, as the deploy tests name it). */
export const RUNTIME_IMAGE = `memql/workbench-runtime:${process.env.MEMQL_TEST_IMAGE_TAG ?? 'ci'}`;

const FIX = 'run scripts/setup/install-docker.sh and scripts/setup/install-images.sh (as root)';

/** What one `docker` command printed and how it ended. */
export interface DockerCommandOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `docker <args>` (with `input` on stdin); never throws on a non-zero exit. */
export function dockerCommand(
  args: readonly string[],
  input?: string,
): Promise<DockerCommandOutcome> {
  return new Promise((done, fail) => {
    const child = execFile(
      'docker',
      args,
      { maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        if (err && typeof err.code !== 'number') fail(err);
        else done({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** `docker <args>`: stdout, or a throw naming the command, its stderr and the fix. */
async function docker(args: readonly string[], input?: string): Promise<string> {
  const r = await dockerCommand(args, input);
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')} failed: ${r.stderr.trim()}; ${FIX}`);
  return r.stdout;
}

/** The runtime image's id; throws, naming the fix, when it is missing. */
export async function runtimeImageId(): Promise<string> {
  return (await docker(['image', 'inspect', '--format', '{{.Id}}', RUNTIME_IMAGE])).trim();
}

/**
 * The runtime image with npm removed (node and git kept), tagged after the runtime
 * image's id so a rebuilt runtime image gets a new one. Made once; reused after.
 */
export async function imageWithoutNpm(): Promise<string> {
  const base = (await runtimeImageId()).replace(/^sha256:/, '').slice(0, 12);
  const tag = `memql/test-no-npm:${base}`;
  const found = await docker(['image', 'ls', '--quiet', tag]);
  if (found.trim() !== '') return tag;
  const dockerfile = [
    `FROM ${RUNTIME_IMAGE}`,
    'RUN rm -rf /usr/local/bin/npm /usr/local/bin/npx /usr/local/lib/node_modules/npm \\',
    '      /usr/bin/npm /usr/bin/npx /usr/lib/node_modules/npm \\',
    ' && ! command -v npm && node --version && git --version',
    '',
  ].join('\n');
  await docker(['build', '--network', 'none', '--tag', tag, '-'], dockerfile);
  return tag;
}
