/**
 * Turning schema validation issues into messages that name the field.
 *
 * A model that gets `invalid_arguments` can only fix the call if the message says
 * which field is wrong and how, in a stable, short form (`args.path: required
 * (expected string)`); zod's default wording is neither short nor ours to keep stable.
 * Internal to the contract module.
 *
 * @module
 */

import type { z } from 'zod';

/** One wrong field: where it is and what is wrong with it. */
export interface FieldProblem {
  /** Dotted path from the envelope root, e.g. `args.env.HOME` or `environment.needs[1]`. */
  readonly field: string;
  /** What is wrong, e.g. `expected string, received number`. */
  readonly problem: string;
}

/** How many problems a message lists before summarising the rest. */
const MAX_LISTED_PROBLEMS = 5;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Render a path (`['args', 'env', 'HOME']`) as `args.env.HOME`. */
export function renderFieldPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') {
      out += `[${segment}]`;
    } else {
      const key = String(segment);
      if (IDENTIFIER.test(key)) {
        out += out === '' ? key : `.${key}`;
      } else {
        out += `[${JSON.stringify(key)}]`;
      }
    }
  }
  return out === '' ? '(root)' : out;
}

/** The value at `path` inside `input`, and whether the last key was present at all. */
function valueAt(
  input: unknown,
  path: readonly PropertyKey[],
): { present: boolean; value: unknown } {
  let current: unknown = input;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null)
      return { present: false, value: undefined };
    const key = typeof segment === 'symbol' ? segment : String(segment);
    if (!Object.hasOwn(current, key)) return { present: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { present: true, value: current };
}

function describeValueType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value;
}

/** The offending value itself when it is a short string (names the typo), else its type. */
function describeReceived(input: unknown, path: readonly PropertyKey[]): string {
  const at = valueAt(input, path);
  if (!at.present) return 'nothing';
  if (typeof at.value === 'string' && at.value.length <= 64) return JSON.stringify(at.value);
  return describeValueType(at.value);
}

function describeExpected(expected: string): string {
  return expected === 'int' ? 'integer' : expected;
}

function sizeProblem(
  direction: 'min' | 'max',
  origin: string,
  limit: number | bigint,
  inclusive: boolean,
): string {
  const n = Number(limit);
  if (origin === 'string') {
    if (direction === 'min' && n === 1) return 'must not be empty';
    return `must be at ${direction === 'min' ? 'least' : 'most'} ${n} characters`;
  }
  if (origin === 'array' || origin === 'set') {
    return `must have at ${direction === 'min' ? 'least' : 'most'} ${n} items`;
  }
  if (direction === 'min') return inclusive ? `must be >= ${n}` : `must be > ${n}`;
  return inclusive ? `must be <= ${n}` : `must be < ${n}`;
}

/**
 * Convert zod issues into field problems.
 *
 * @param issues - the issues of a failed `safeParse`.
 * @param root - path segments of the parsed value inside the envelope (`['args']`).
 * @param input - the value that was parsed, used to tell "missing" from "wrong type".
 */
export function fieldProblems(
  issues: readonly z.core.$ZodIssue[],
  root: readonly PropertyKey[],
  input: unknown,
): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of issues) {
    const path = [...root, ...issue.path];
    const field = renderFieldPath(path);
    switch (issue.code) {
      case 'invalid_type': {
        const at = valueAt(input, issue.path);
        const expected = describeExpected(issue.expected);
        out.push({
          field,
          problem: at.present
            ? `expected ${expected}, received ${describeValueType(at.value)}`
            : `required (expected ${expected})`,
        });
        break;
      }
      case 'too_small':
        out.push({
          field,
          problem: sizeProblem('min', issue.origin, issue.minimum, issue.inclusive ?? true),
        });
        break;
      case 'too_big':
        out.push({
          field,
          problem: sizeProblem('max', issue.origin, issue.maximum, issue.inclusive ?? true),
        });
        break;
      case 'invalid_value': {
        const expected =
          issue.values.length === 1
            ? `expected ${JSON.stringify(issue.values[0])}`
            : `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
        out.push({
          field,
          problem: `${expected}, received ${describeReceived(input, issue.path)}`,
        });
        break;
      }
      case 'unrecognized_keys':
        // One problem per key, so each unknown key is named as a field of its own.
        for (const key of issue.keys) {
          out.push({ field: renderFieldPath([...path, key]), problem: 'unknown key' });
        }
        break;
      case 'invalid_key': {
        const inner = issue.issues[0]?.message ?? issue.message;
        out.push({ field, problem: `invalid key: ${inner}` });
        break;
      }
      default:
        // Formats, regexes and refinements carry messages written in the schemas.
        out.push({ field, problem: issue.message });
    }
  }
  return out;
}

/** `field: problem; field: problem` with the list capped, for a single message line. */
export function formatFieldProblems(problems: readonly FieldProblem[]): string {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => `${p.field}: ${p.problem}`);
  const rest = problems.length - listed.length;
  if (rest > 0) listed.push(`and ${rest} more`);
  return listed.join('; ');
}
