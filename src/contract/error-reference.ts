/**
 * The error code table of docs/api.md, made from the one list of codes: each code with
 * its HTTP status, who has to act, whether a retry may succeed, and its meaning (a test
 * keeps the copy in docs/api.md in step).
 *
 * @module
 */

import { ERROR_CODE_LIST, ERROR_CODES } from './errors.js';

/** The Markdown table of every error code, in the list's order. */
export function renderErrorReference(): string {
  const rows = ERROR_CODE_LIST.map((code) => {
    const info = ERROR_CODES[code];
    const meaning = info.meaning.replaceAll('|', '\\|');
    return `| \`${code}\` | ${info.httpStatus} | ${info.category} | ${info.retryable ? 'yes' : 'no'} | ${meaning} |`;
  });
  return ['| code | HTTP | who acts | retry | meaning |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}
