/**
 * The environment hint: the caller saying what an action needs, so a workbench that
 * cannot provide it refuses with a typed answer before anything runs.
 *
 * Two outcomes are kept apart on purpose. A mismatch (`environment_mismatch`) is a
 * fact about the workbench, and a tool loop may act on it, for example by rerouting to
 * a worker host. A malformed hint (`invalid_environment_hint`) is the caller getting
 * the contract wrong; if the two were folded together a typo such as `macos-tooling`
 * would read as "the workbench cannot do this" and could send the work to a user's
 * machine. Unknown values are never dropped either: the action would then run having
 * been told it needs something nobody checked.
 *
 * @module
 */

import { z } from 'zod';
import { WorkbenchError } from './errors.js';
import { fieldProblems, formatFieldProblems } from './field-problems.js';
import { NEEDS, type Need, UNMET_NEED_VALUES, type UnmetNeed } from './needs.js';
import { type DispatchFailure, errorResult } from './result.js';

export { NEEDS, type Need, UNMET_NEED_VALUES, type UnmetNeed } from './needs.js';

/** What a node provides, need by need. */
export type EnvironmentProvides = Readonly<Record<Need, boolean>>;

/**
 * What a workbench provides today: none of the four. Written as a table rather than
 * "any need fails" so that the day a GPU-bearing workbench exists, one entry turns
 * true and nothing else changes.
 */
export const WORKBENCH_PROVIDES: EnvironmentProvides = Object.freeze({
  display: false,
  gpu: false,
  macos_tooling: false,
  user_files: false,
});

/**
 * Operating system names as Go spells them (`GOOS`, from go/build's known list). The
 * hint's `os` is one of these; anything else (`macos`, `Linux`) is a malformed hint,
 * for the same reason an unknown need is: a misspelt platform must not read as a
 * mismatch and trigger a reroute.
 */
export const GOOS_VALUES = [
  'aix',
  'android',
  'darwin',
  'dragonfly',
  'freebsd',
  'hurd',
  'illumos',
  'ios',
  'js',
  'linux',
  'nacl',
  'netbsd',
  'openbsd',
  'plan9',
  'solaris',
  'wasip1',
  'windows',
  'zos',
] as const;

/** An operating system name in Go's spelling. */
export type GoOs = (typeof GOOS_VALUES)[number];

/**
 * The OS a workbench is, whichever node evaluates the hint: a workbench is a Linux
 * sandbox (bubblewrap or a container) by construction. The agent checks a hint
 * against this before forwarding, and the workbench's own boundary checks the same
 * value, so the two can never disagree.
 */
export const WORKBENCH_OS: GoOs = 'linux';

/** Most entries accepted in `needs` (duplicates are allowed and collapsed). */
export const MAX_HINT_NEEDS = 16;

/**
 * The hint's schema. Unknown keys make the hint invalid: a misspelt key (`need`)
 * silently ignored would drop a requirement nobody then checks.
 */
export const environmentHintSchema = z
  .strictObject({
    /** The platform the action needs, in Go's spelling; compared with the node's own. */
    os: z
      .enum(GOOS_VALUES)
      .describe('Operating system the action needs, Go spelling: "linux", "darwin", "windows".')
      .optional(),
    /** What else the action needs, from the closed set {@link NEEDS}. */
    needs: z
      .array(z.enum(NEEDS))
      .max(MAX_HINT_NEEDS)
      .describe('Things the action needs beyond a headless Linux sandbox.')
      .optional(),
  })
  .describe(
    'Optional. Declare what the action needs when it is something a workbench is not; omit it otherwise.',
  );

/** A well-formed environment hint. */
export type EnvironmentHint = z.output<typeof environmentHintSchema>;

/**
 * A malformed hint, as {@link parseEnvironmentHint} answers one: the message names the
 * field (`invalid_environment_hint: environment.needs[0]: ...`).
 */
export interface InvalidEnvironmentHint {
  readonly kind: 'invalid';
  readonly message: string;
}

/** What {@link parseEnvironmentHint} reads: the typed hint, or why it is malformed. */
export type EnvironmentHintParse =
  /** Well formed; `hint` is undefined when the caller gave none. */
  { readonly kind: 'hint'; readonly hint: EnvironmentHint | undefined } | InvalidEnvironmentHint;

/** The outcome of evaluating a (well-formed) hint on one node. */
export type EnvironmentEvaluation =
  /** No hint was given: the call proceeds, and nothing is assumed. */
  | { readonly kind: 'none' }
  /** This node provides everything the hint asks for. */
  | { readonly kind: 'ok' }
  /** Something is unmet; `unmetNeeds` is never empty. */
  | {
      readonly kind: 'mismatch';
      readonly unmetNeeds: readonly [UnmetNeed, ...UnmetNeed[]];
      readonly message: string;
    };

/**
 * Map a Node.js `process.platform` value to Go's spelling, so the node compares the
 * same names the hint uses. `win32` and `cygwin` are `windows`; `sunos` is `solaris`
 * (Node reports illumos as `sunos` as well). Names that already agree pass through, and
 * a platform Go has no port for (`haiku`) is returned unchanged: it equals no valid
 * hint `os`, so any `os` hint mismatches there, which is the truth.
 */
export function goosFromNodePlatform(platform: string): string {
  switch (platform) {
    case 'win32':
    case 'cygwin':
      return 'windows';
    case 'sunos':
      return 'solaris';
    default:
      return platform;
  }
}

/**
 * Read a call's hint into its type: what the envelope parse does with `environment`,
 * once per process, so every later stage takes the typed hint.
 *
 * @param input - the envelope's `environment` as received; `undefined` means no hint.
 *   `null` is not "no hint": JSON cannot send `undefined`, so an explicit null is a
 *   caller mistake and is `invalid`.
 */
export function parseEnvironmentHint(input: unknown): EnvironmentHintParse {
  if (input === undefined) return { kind: 'hint', hint: undefined };
  const parsed = environmentHintSchema.safeParse(input);
  if (parsed.success) return { kind: 'hint', hint: parsed.data };
  const problems = fieldProblems(parsed.error.issues, ['environment'], input);
  return { kind: 'invalid', message: `invalid_environment_hint: ${formatFieldProblems(problems)}` };
}

/**
 * Evaluate a parsed hint against what a node provides and the node's own OS. Each
 * process boundary evaluates the hint again (defence in depth), on the typed hint its
 * envelope parse produced.
 *
 * @param hint - the envelope's `environment`; `undefined` means no hint.
 * @param provides - the node's table, normally {@link WORKBENCH_PROVIDES}.
 * @param nodeOs - the evaluating node's OS in Go's spelling (see
 *   {@link goosFromNodePlatform}); passed in so this stays a function of data.
 */
export function evaluateEnvironment(
  hint: EnvironmentHint | undefined,
  provides: EnvironmentProvides,
  nodeOs: string,
): EnvironmentEvaluation {
  if (hint === undefined) return { kind: 'none' };
  const declared = new Set(hint.needs ?? []);
  // Canonical order, duplicates collapsed, so equal hints give equal answers.
  const unmet: UnmetNeed[] = NEEDS.filter((need) => declared.has(need) && !provides[need]);
  const hintOs = hint.os;
  if (hintOs !== undefined && hintOs !== nodeOs) unmet.push('os');
  const [first, ...rest] = unmet;
  if (first === undefined) return { kind: 'ok' };
  const osNote =
    hintOs !== undefined && hintOs !== nodeOs
      ? ` (the hint asks for os "${hintOs}"; this node is "${nodeOs}")`
      : '';
  return {
    kind: 'mismatch',
    unmetNeeds: [first, ...rest],
    message:
      `environment_mismatch: this workbench cannot provide ${unmet.join(', ')}${osNote}; ` +
      'the action did not run',
  };
}

/** The structured body of an `environment_mismatch` result. */
export interface EnvironmentMismatchPayload {
  /** What the workbench could not provide; never empty. */
  readonly unmetNeeds: readonly UnmetNeed[];
}

/**
 * Build the `environment_mismatch` payload. Throws `internal` on an empty list:
 * a mismatch with nothing unmet is a bug, and consumers rely on the list being non-empty.
 */
export function environmentMismatchPayload(
  unmetNeeds: readonly UnmetNeed[],
): EnvironmentMismatchPayload {
  if (unmetNeeds.length === 0) {
    throw new WorkbenchError('internal', 'internal: environment mismatch with no unmet needs');
  }
  return { unmetNeeds: [...unmetNeeds] };
}

/**
 * Read the `environment_mismatch` payload: the only way consumers learn what was
 * unmet (never by parsing the message). Returns `null` unless `payload` is an object
 * whose `unmetNeeds` is a non-empty list of known {@link UnmetNeed} values; an unknown
 * value makes the whole payload unreadable rather than partly read, because a consumer
 * deciding where to reroute must not act on half the reasons. Extra keys are ignored.
 */
export function environmentMismatchFromPayload(
  payload: unknown,
): { unmetNeeds: UnmetNeed[] } | null {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  const list: unknown = (payload as { unmetNeeds?: unknown }).unmetNeeds;
  if (!Array.isArray(list) || list.length === 0) return null;
  const unmetNeeds: UnmetNeed[] = [];
  for (const item of list) {
    if (!(UNMET_NEED_VALUES as readonly unknown[]).includes(item)) return null;
    unmetNeeds.push(item as UnmetNeed);
  }
  return { unmetNeeds };
}

/**
 * The dispatch failure an evaluation (or a malformed hint) calls for, or `null` when
 * the call may proceed (`none` or `ok`). Both node types use this, so the local and
 * the forwarded path answer alike.
 */
export function environmentFailure(
  evaluation: EnvironmentEvaluation | InvalidEnvironmentHint,
): DispatchFailure | null {
  switch (evaluation.kind) {
    case 'none':
    case 'ok':
      return null;
    case 'mismatch':
      return errorResult(
        'environment_mismatch',
        evaluation.message,
        environmentMismatchPayload(evaluation.unmetNeeds),
      );
    case 'invalid':
      return errorResult('invalid_environment_hint', evaluation.message);
  }
}
