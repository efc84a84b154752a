/**
 * The registry of settings: every variable the configuration reads, assembled in the
 * order of the docs table from its parts (`node-variables.ts`, `workbench-variables.ts`,
 * `network-variables.ts`, `worker-variables.ts`), and the lookups the loader uses.
 *
 * @module
 */

import type { ConfigVariable } from './config-variable.js';
import { NETWORK_VARIABLES } from './network-variables.js';
import { NODE_VARIABLES } from './node-variables.js';
import { WORKBENCH_VARIABLES } from './workbench-variables.js';
import { WORKER_VARIABLES } from './worker-variables.js';

export type { ConfigVariable } from './config-variable.js';

/**
 * Every variable the configuration reads, in the order the table lists them: the node
 * and its storage, commands and workspaces, the network, the worker host.
 * Empty values count as unset everywhere, so `FOO=` in a manifest means "default".
 */
export const CONFIG_VARIABLES = [
  ...NODE_VARIABLES,
  ...WORKBENCH_VARIABLES,
  ...NETWORK_VARIABLES,
  ...WORKER_VARIABLES,
] as const satisfies readonly ConfigVariable[];

/** The name of a variable in {@link CONFIG_VARIABLES}. */
export type ConfigVariableName = (typeof CONFIG_VARIABLES)[number]['name'];

const BY_NAME: ReadonlyMap<string, ConfigVariable> = new Map(
  CONFIG_VARIABLES.map((variable) => [variable.name, variable]),
);

const KNOWN_ALIASES: ReadonlySet<string> = new Set(
  CONFIG_VARIABLES.flatMap((variable: ConfigVariable) => variable.aliases ?? []),
);

/** The entry for `name`. */
export function configVariable(name: ConfigVariableName): ConfigVariable {
  // Every ConfigVariableName is in the map by construction.
  return BY_NAME.get(name)!;
}

/** True when `name` is a variable the configuration reads, or an alias of one. */
export function isKnownVariable(name: string): boolean {
  return BY_NAME.has(name) || KNOWN_ALIASES.has(name);
}
