/**
 * The bounds and field schemas the actions' arguments share: `actions.ts` and
 * `process-actions.ts` build their schemas from these, so a path, a command line or an
 * environment means the same in every action.
 *
 * @module
 */

import { z } from 'zod';

/** Longest accepted workspace-relative path, in UTF-16 code units (Linux PATH_MAX). */
export const MAX_PATH_CHARS = 4096;
/**
 * Hard ceiling on `fs_write` content and `exec` stdin, in UTF-16 code units. Over it
 * the envelope fails with `payload_too_large`; the workbench may enforce a lower,
 * configured limit with the same code.
 */
export const MAX_PAYLOAD_CHARS = 32 * 1024 * 1024;
/**
 * The largest workspace file `fs_write` makes (appends included), bytes: files written
 * through the API are at most this; larger ones are made by commands or `fetch`.
 */
export const MAX_FILE_WRITE_BYTES = 32 * 1024 * 1024;
/**
 * The largest file an upload (`fs_write` in parts, see {@link fsWriteArgsSchema}'s
 * `upload`) makes, bytes: 4 GiB. The workspace's quota may hold it lower.
 */
export const MAX_UPLOAD_BYTES = 4 * 1024 * 1024 * 1024;
/** Pattern of an upload id: chosen by the caller, 8 to 64 letters, digits, `_` or `-`. */
export const UPLOAD_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
/** Longest accepted `exec` command string (64 KiB), in UTF-16 code units. */
export const MAX_COMMAND_CHARS = 64 * 1024;
/** Longest accepted timeout for `exec` and `fetch`: one hour, in milliseconds. */
export const MAX_TIMEOUT_MS = 3_600_000;
/** Most environment variables one `exec` may set. */
export const MAX_ENV_ENTRIES = 256;
/** Longest value of one `exec` environment variable, in UTF-16 code units. */
export const MAX_ENV_VALUE_CHARS = 32 * 1024;
/** Longest accepted `fetch` URL, in characters. */
export const MAX_URL_CHARS = 8192;
/** Most entries one `fs_list` may return. */
export const MAX_LIST_LIMIT = 10_000;
/** Entries `fs_list` returns when `limit` is omitted. */
export const DEFAULT_LIST_LIMIT = 1000;
/** Longest artifact name, in characters (a common file name limit). */
export const MAX_ARTIFACT_NAME_CHARS = 255;
/** Most expected outputs one `exec` may name. */
export const MAX_EXPECTED_OUTPUTS = 32;

/**
 * Arg fields whose size is the caller's payload rather than a shape mistake: when one
 * of these is over its bound the envelope answers `payload_too_large`, not
 * `invalid_arguments`, so a tool loop can tell "split the write" from "fix the call".
 */
export const PAYLOAD_ARG_FIELDS: ReadonlySet<string> = new Set(['content', 'stdin']);

/** Pattern of an environment variable name accepted by `exec`. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A workspace-relative path argument. */
export const workspacePath = () =>
  z
    .string()
    .min(1)
    .max(MAX_PATH_CHARS)
    .describe('Path relative to the workspace root; absolute paths and ".." are rejected.');

/** How a content string is encoded. */
export const encoding = () =>
  z
    .enum(['utf8', 'base64'])
    .default('utf8')
    .describe('How the content string is encoded: "utf8" text or "base64" bytes.');

/** An optional time limit argument. */
export const timeoutMs = () =>
  z.int().positive().max(MAX_TIMEOUT_MS).describe('Time limit in milliseconds.').optional();

/** A command line, run by `/bin/sh -c` after the allowlist check. */
export const commandLine = () =>
  z
    .string()
    .min(1)
    .max(MAX_COMMAND_CHARS)
    .describe('Shell command line; every binary in it must be on the allowlist.');

/**
 * A command's extra environment. Names are restricted to portable identifiers so a name
 * cannot smuggle `=` or shell syntax, and a value holds no NUL (the runners pass values
 * NUL-separated, so one would end it there); the node's own secrets are never passed.
 * This is where a command's environment is checked on its way in; the sandbox refuses
 * what no environment can carry once more, at its own boundary.
 */
export const commandEnv = () =>
  z
    .record(
      z
        .string()
        .regex(ENV_NAME_PATTERN, { error: 'expected a name matching [A-Za-z_][A-Za-z0-9_]*' }),
      z
        .string()
        .max(MAX_ENV_VALUE_CHARS)
        .refine((value) => !value.includes('\0'), {
          error: 'the value contains a NUL byte, which no environment variable can hold',
        }),
    )
    .refine((env) => Object.keys(env).length <= MAX_ENV_ENTRIES, {
      error: `at most ${MAX_ENV_ENTRIES} variables`,
    });
