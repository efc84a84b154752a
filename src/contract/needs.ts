/**
 * The vocabulary of needs an environment hint may declare, on its own so that the
 * hint's evaluation (`environment.ts`) and the worker-host vocabulary
 * (`worker-consent.ts`) can both use it without importing each other.
 *
 * @module
 */

/**
 * The closed set of needs a hint may declare. They name exactly what a workbench (a
 * headless Linux sandbox in the cluster with an empty directory tree) is not.
 */
export const NEEDS = ['display', 'gpu', 'macos_tooling', 'user_files'] as const;

/** A need a hint may declare. */
export type Need = (typeof NEEDS)[number];

/**
 * A reason in `unmetNeeds`: a declared need, or `os` when the hint names a platform
 * the evaluating node is not. `os` is output-only: it is not accepted as an input need.
 */
export type UnmetNeed = Need | 'os';

/** Every value {@link UnmetNeed} can take, in the order `unmetNeeds` lists them. */
export const UNMET_NEED_VALUES: readonly UnmetNeed[] = [...NEEDS, 'os'];
