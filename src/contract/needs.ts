/**
 * The needs a hint may declare, and the reasons `unmetNeeds` lists: a leaf of the
 * contract, so that the worker vocabulary (`worker-consent.ts`, which `result.ts`
 * refers to) can name needs without importing the hint's evaluation, which imports
 * `result.ts`.
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
