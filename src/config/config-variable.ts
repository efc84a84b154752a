/**
 * One environment variable the configuration reads. `CONFIG_VARIABLES` (`variables.ts`)
 * is the single source of names, defaults and documentation: the loader takes
 * defaults from it and the table of docs/configuration.md is rendered from it.
 */
export interface ConfigVariable {
  /** The variable's name, e.g. `MEMQL_COMMAND_CONCURRENCY`. */
  readonly name: string;
  /**
   * The default, as text, parsed exactly like a value from the environment.
   * `undefined` when the variable has no fixed default (it is optional, or its
   * default is derived; then {@link defaultText} explains).
   */
  readonly default: string | undefined;
  /** How the default reads in documentation when it is not a fixed string. */
  readonly defaultText?: string;
  /** The accepted form and unit, e.g. `positive integer (ms)`. */
  readonly type: string;
  /** What the setting does, for operators. */
  readonly description: string;
  /** The value is a credential: never shown in errors, and redacted when config is logged. */
  readonly secret?: boolean;
  /** Older names also accepted; this name wins when both are set. */
  readonly aliases?: readonly string[];
}
