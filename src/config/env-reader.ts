import {
  type ConfigIssue,
  formatIssue,
  type IssueParts,
  type ValueSource,
} from './config-error.js';
import type { Parsed } from './parsed.js';
import { redactUrlPassword } from './redact.js';
import { type ConfigVariableName, configVariable } from './variables.js';

/** An environment as handed to loadConfig; `undefined` values count as unset. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A variable's effective text and where it came from. */
export interface Lookup {
  /** The name actually read: the variable, or the alias that supplied the value. */
  readonly variable: string;
  /** The trimmed, non-empty text. */
  readonly text: string;
  /** Environment or a binary's default. */
  readonly source: ValueSource;
}

/**
 * Reads variables for loadConfig and collects every problem instead of
 * stopping at the first, so one failed start lists everything to fix.
 * Values are trimmed, and an empty value counts as unset.
 */
export class EnvReader {
  /** Problems found so far, in reading order. */
  readonly issues: ConfigIssue[] = [];
  readonly #env: Env;
  readonly #defaults: Readonly<Partial<Record<ConfigVariableName, string>>>;
  readonly #failed = new Set<ConfigVariableName>();

  /**
   * @param env - the environment.
   * @param defaults - defaults that replace the registry's (a binary's choices),
   *   parsed exactly like environment values.
   */
  constructor(env: Env, defaults: Readonly<Partial<Record<ConfigVariableName, string>>>) {
    this.#env = env;
    this.#defaults = defaults;
  }

  /** The environment's value for `name` or its first set alias, else `undefined`. */
  fromEnv(name: ConfigVariableName): Lookup | undefined {
    for (const variable of [name, ...(configVariable(name).aliases ?? [])]) {
      const text = this.#env[variable]?.trim();
      if (text !== undefined && text !== '') return { variable, text, source: 'env' };
    }
    return undefined;
  }

  /** True when the environment sets `name` (or an alias) to something non-empty. */
  isSet(name: ConfigVariableName): boolean {
    return this.fromEnv(name) !== undefined;
  }

  /** The effective value of `name`: environment, else a binary's default, else the registry's. */
  lookup(name: ConfigVariableName): Lookup | undefined {
    const set = this.fromEnv(name);
    if (set !== undefined) return set;
    const supplied = this.#defaults[name]?.trim();
    if (supplied !== undefined && supplied !== '') {
      return { variable: name, text: supplied, source: 'default' };
    }
    const registry = configVariable(name).default;
    return registry === undefined || registry === ''
      ? undefined
      : { variable: name, text: registry, source: 'env' };
  }

  /**
   * Reads a variable that has a default. On a bad value the issue is recorded
   * and the registry default stands in, so reading can go on; loadConfig throws
   * before any stand-in escapes.
   */
  required<T>(name: ConfigVariableName, parse: (text: string) => Parsed<T>): T {
    const value = this.optional(name, parse);
    if (value !== null) return value;
    const fallback = configVariable(name).default;
    const parsed = fallback === undefined ? undefined : parse(fallback);
    if (parsed?.ok !== true) throw new Error(`config registry: ${name} has no usable default`);
    return parsed.value;
  }

  /** Reads a variable that may be unset: `null` when unset or bad (a bad one is recorded). */
  optional<T>(name: ConfigVariableName, parse: (text: string) => Parsed<T>): T | null {
    const found = this.lookup(name);
    if (found === undefined) return null;
    const parsed = parse(found.text);
    if (parsed.ok) return parsed.value;
    this.report(name, {
      variable: found.variable,
      value: this.shown(name, found.text),
      expected: parsed.expected,
      source: found.source,
    });
    return null;
  }

  /**
   * Reads a comma-separated list, parsing each entry; one issue per bad entry,
   * each naming it. Bad entries are left out of the (then unused) result.
   */
  list<T>(name: ConfigVariableName, parse: (entry: string) => Parsed<T>): T[] {
    const found = this.lookup(name);
    if (found === undefined) return [];
    const values: T[] = [];
    for (const part of found.text.split(',')) {
      const entry = part.trim();
      if (entry === '') continue;
      const parsed = parse(entry);
      if (parsed.ok) values.push(parsed.value);
      else {
        this.report(name, {
          variable: found.variable,
          value: found.text,
          entry,
          expected: parsed.expected,
          source: found.source,
        });
      }
    }
    return values;
  }

  /** True when a problem has been recorded for `name`; cross-checks skip such values. */
  failed(name: ConfigVariableName): boolean {
    return this.#failed.has(name);
  }

  /** Records a problem attributed to `name`. */
  report(name: ConfigVariableName, parts: IssueParts): void {
    this.#failed.add(name);
    this.issues.push(formatIssue(parts));
  }

  /** Records already-formatted problems attributed to `name`. */
  reportIssues(name: ConfigVariableName, issues: readonly ConfigIssue[]): void {
    this.#failed.add(name);
    this.issues.push(...issues);
  }

  /** The value as it may appear in a message: secrets never do. */
  shown(name: ConfigVariableName, text: string): string {
    if (configVariable(name).secret) return '[redacted]';
    return name === 'MEMQL_DATABASE_URL' ? redactUrlPassword(text) : text;
  }
}
