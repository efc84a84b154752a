/**
 * The dispatch envelope: one `workbenchHost` call as the agent node receives it and as
 * it crosses the mesh, `{action, args, runId, agentId, taskId, callId?, environment?}`.
 *
 * The caller's authority is deliberately not in the envelope: it comes from the
 * transport (who connected, which tool loop), never from data a model can write.
 *
 * @module
 */

import { z } from 'zod';
import {
  ACTION_NAMES,
  ACTION_SCHEMAS,
  type ActionArgs,
  type ActionArgsInput,
  type ActionName,
  isActionName,
  PAYLOAD_ARG_FIELDS,
  type ToolActionName,
} from './actions.js';
import { type EnvironmentHint, parseEnvironmentHint } from './environment.js';
import { type FieldProblem, fieldProblems, formatFieldProblems } from './field-problems.js';
import { type DispatchFailure, errorResult } from './result.js';
import { checkRunId } from './run-id.js';

/** Longest accepted `agentId`, `taskId` or `callId`, in characters. */
export const MAX_ID_CHARS = 256;

/** The fields every envelope has, whatever the action. */
export interface EnvelopeBase {
  /** The run whose workspace the call works in (see `checkRunId` for the syntax). */
  readonly runId: string;
  /** The agent making the call; recorded in audit events. */
  readonly agentId: string;
  /** The task within the run; recorded in audit events. */
  readonly taskId: string;
  /**
   * The caller's idempotency key for this call (the model's tool-call id is a good
   * one), echoed in logs and audit events. A repeat with the same key and the same
   * action, arguments and hint is the same call: it gets the recorded outcome instead
   * of running again. The same key with anything else is refused (`call_id_conflict`).
   */
  readonly callId?: string;
  /**
   * The environment hint, parsed into its type by {@link parseEnvelope} (a malformed
   * hint answers `invalid_environment_hint` there, not `invalid_arguments`). Each process
   * boundary evaluates it against what its node provides (`admitEnvelope`) without
   * parsing it again. Absent when the caller gave no hint.
   */
  readonly environment?: EnvironmentHint;
}

/**
 * A dispatch envelope as a caller writes it (the body of `POST /v1/dispatch`, what
 * {@link parseEnvelope} reads): `args` in the action's input shape, defaults optional.
 * The parse checks all of it; this type only helps callers write it.
 */
export interface DispatchRequest {
  /** The action (system-only actions are refused by the server). */
  readonly action: ToolActionName | (string & {});
  /** The action's arguments. */
  readonly args: ActionArgsInput<ToolActionName> | Record<string, unknown>;
  readonly runId: string;
  readonly agentId: string;
  readonly taskId: string;
  readonly callId?: string;
  /** The environment hint, `{ os?, needs? }`. */
  readonly environment?: unknown;
}

/** An envelope for action `A`, with `args` parsed by that action's schema. */
export type EnvelopeFor<A extends ActionName> = EnvelopeBase & {
  /** The action to run. */
  readonly action: A;
  /** The action's arguments, defaults applied. */
  readonly args: ActionArgs<A>;
};

declare const parsedEnvelope: unique symbol;

/**
 * A parsed envelope: a union keyed by `action`, so narrowing on it types `args`. Only
 * {@link parseEnvelope} makes one (the brand keeps raw objects out), once at the first
 * boundary of each process; every layer after it takes the envelope as given. It
 * crosses the mesh as {@link envelopeToWire} and is parsed again on the far side.
 */
export type Envelope = {
  [A in ActionName]: EnvelopeFor<A> & { readonly [parsedEnvelope]: true };
}[ActionName];

/**
 * The payload of an `invalid_arguments` (or `payload_too_large`) failure from
 * {@link parseEnvelope}: every wrong field, so a caller can fix them all at once.
 */
export interface InvalidArgumentsPayload {
  /** The wrong fields, envelope fields first, then `args.*`. */
  readonly problems: readonly FieldProblem[];
}

/** The outcome of {@link parseEnvelope}. */
export type EnvelopeParseResult =
  | { readonly ok: true; readonly envelope: Envelope }
  | (DispatchFailure & {
      readonly errorCode: 'invalid_arguments' | 'payload_too_large' | 'invalid_environment_hint';
    });

const boundedId = () => z.string().min(1).max(MAX_ID_CHARS);

/** Everything but `args`, which is parsed by the action's own schema afterwards. */
const envelopeShellSchema = z.strictObject({
  action: z.string(),
  args: z.looseObject({}),
  runId: z.string().superRefine((value, ctx) => {
    const problem = checkRunId(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }),
  agentId: boundedId(),
  taskId: boundedId(),
  callId: boundedId().optional(),
  environment: z.unknown().optional(),
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOversizePayloadIssue(issue: z.core.$ZodIssue): boolean {
  return (
    issue.code === 'too_big' &&
    issue.path.length === 1 &&
    typeof issue.path[0] === 'string' &&
    PAYLOAD_ARG_FIELDS.has(issue.path[0])
  );
}

function failure(
  code: 'invalid_arguments' | 'payload_too_large',
  problems: readonly FieldProblem[],
): EnvelopeParseResult {
  const payload: InvalidArgumentsPayload = { problems };
  return {
    ...errorResult(code, `${code}: ${formatFieldProblems(problems)}`, payload),
    errorCode: code,
  };
}

/**
 * Parse and validate an envelope.
 *
 * Every problem found is reported, each naming its field (`args.path: required
 * (expected string)`, `action: unknown action "fs_move"; expected one of ...`), with
 * code `invalid_arguments`. When the only problems are oversize payload fields
 * (`args.content`, `args.stdin`) the code is `payload_too_large` instead. A call that
 * is otherwise well formed and carries a malformed environment hint is
 * `invalid_environment_hint` (see {@link parseEnvironmentHint}): a typo in a hint must
 * never read as a mismatch, nor be folded into the arguments' problems.
 */
export function parseEnvelope(input: unknown): EnvelopeParseResult {
  if (!isPlainObject(input)) {
    const received = input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input;
    return failure('invalid_arguments', [
      { field: 'envelope', problem: `expected object, received ${received}` },
    ]);
  }

  const shell = envelopeShellSchema.safeParse(input);
  const problems: FieldProblem[] = shell.success
    ? []
    : fieldProblems(shell.error.issues, [], input);

  const action = input.action;
  if (typeof action === 'string' && !isActionName(action)) {
    problems.unshift({
      field: 'action',
      problem: `unknown action ${JSON.stringify(action)}; expected one of ${ACTION_NAMES.join(', ')}`,
    });
  }

  let args: unknown;
  let argsOversizeOnly = false;
  if (isActionName(action) && isPlainObject(input.args)) {
    const parsedArgs = ACTION_SCHEMAS[action].safeParse(input.args);
    if (parsedArgs.success) {
      args = parsedArgs.data;
    } else {
      argsOversizeOnly = parsedArgs.error.issues.every(isOversizePayloadIssue);
      problems.push(...fieldProblems(parsedArgs.error.issues, ['args'], input.args));
    }
  }

  if (!shell.success || problems.length > 0) {
    // Oversize only wins when nothing else is wrong: a malformed call is fixed first.
    return failure(
      shell.success && argsOversizeOnly ? 'payload_too_large' : 'invalid_arguments',
      problems,
    );
  }

  const { runId, agentId, taskId, callId } = shell.data;
  const hint = parseEnvironmentHint(shell.data.environment);
  if (hint.kind === 'invalid') {
    const code = 'invalid_environment_hint';
    return { ...errorResult(code, hint.message), errorCode: code };
  }
  const environment = hint.hint;
  const envelope = {
    action,
    args,
    runId,
    agentId,
    taskId,
    ...(callId === undefined ? {} : { callId }),
    ...(environment === undefined ? {} : { environment }),
  } as Envelope;
  return { ok: true, envelope };
}

/**
 * The wire form of a parsed envelope: what {@link parseEnvelope} turns back into the
 * same envelope on the other side of the mesh. Defaults stay filled in (they parse
 * to themselves); the one argument a schema converts, `fs_write`'s octal `mode`, is
 * written back as its octal digits.
 */
export function envelopeToWire(envelope: Envelope): object {
  if (envelope.action !== 'fs_write' || envelope.args.mode === undefined) return envelope;
  return {
    ...envelope,
    args: { ...envelope.args, mode: envelope.args.mode.toString(8).padStart(3, '0') },
  };
}
