/**
 * The environment a command sees: a fixed base plus the agent's own entries. The node's
 * environment is never an input, so its secrets cannot reach a command by mistake.
 *
 * @module
 */

import { WorkbenchError } from '../contract/index.js';

/** `PATH` of every command. */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * Merges the agent's entries over `base`. Entry names were validated where the call
 * entered the system; this refuses, again, what no environment can carry (an empty
 * name, `=` in a name, NUL anywhere), because the runners build argv and env blocks from
 * these strings.
 */
export function commandEnv(
  base: Readonly<Record<string, string>>,
  agentEnv: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const [name, value] of Object.entries(agentEnv ?? {})) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      throw new WorkbenchError(
        'invalid_arguments',
        `invalid_arguments: environment variable name ${JSON.stringify(name)} is empty or contains "=" or NUL`,
      );
    }
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new WorkbenchError(
        'invalid_arguments',
        `invalid_arguments: environment variable ${name} has a value that is not a NUL-free string`,
      );
    }
    env[name] = value;
  }
  return env;
}
