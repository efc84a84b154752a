import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ERROR_CODE_LIST,
  ERROR_CODES,
  NEEDS,
  PROCESS_SIGNALS,
  SCOPES,
  TERMINAL_RUN_STATUSES,
  TOKEN_KINDS,
  TOOL_ACTION_NAMES,
  workbenchToolDefinition,
} from '../../src/contract/index.js';

/**
 * The Python SDK's files made from the contract (`clients/python/src/memql_workbench/`):
 * `_contract.py` (the error codes with their categories and meanings, the action names
 * and the closed vocabularies) and `tool-definition.json` (the `workbenchHost` tool a
 * model is given). `test/client/python-sdk.test.ts` holds them in step; after a change
 * of the contract, `npm run build` then `node dist/test/support/python-sdk-files.js
 * --write` writes them again.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The SDK's package directory. */
export const PYTHON_PACKAGE = resolve(ROOT, 'clients/python/src/memql_workbench');

/** A JSON string is a Python string literal too. */
const py = (value: string) => JSON.stringify(value);

function literal(name: string, doc: string, values: readonly string[]): string[] {
  return [`${name} = Literal[`, ...values.map((v) => `    ${py(v)},`), ']', `"""${doc}"""`, ''];
}

function tuple(name: string, type: string, values: readonly string[]): string[] {
  return [
    `${name}: Final[tuple[${type}, ...]] = (`,
    ...values.map((v) => `    ${py(v)},`),
    ')',
    '',
  ];
}

/** `_contract.py` as the contract makes it now. */
export function renderPythonContract(): string {
  const categories = [...new Set(Object.values(ERROR_CODES).map((info) => info.category))];
  const lines = [
    '"""The contract\'s vocabularies, made from src/contract by test/support/python-sdk-files.ts.',
    '',
    'Do not edit: after a change of the contract run `npm run build`, then',
    '`node dist/test/support/python-sdk-files.js --write`. test/client/python-sdk.test.ts',
    'holds this file in step with the contract.',
    '"""',
    '',
    'from __future__ import annotations',
    '',
    'from typing import Final, Literal',
    '',
    ...literal('ErrorCategory', 'Who has to act on a failure (see ERROR_CODES).', categories),
    ...literal('ErrorCode', 'A stable error code: callers match on it, never on messages.', [
      ...ERROR_CODE_LIST,
    ]),
    'ERROR_CODES: Final[dict[str, tuple[ErrorCategory, str]]] = {',
    ...ERROR_CODE_LIST.flatMap((code) => [
      `    ${py(code)}: (`,
      `        ${py(ERROR_CODES[code].category)},`,
      `        ${py(ERROR_CODES[code].meaning)},`,
      '    ),',
    ]),
    '}',
    '"""Every error code: its category and what it means."""',
    '',
    ...literal('ToolActionName', 'An action a tool loop may call (not the system-only ones).', [
      ...TOOL_ACTION_NAMES,
    ]),
    ...tuple('TOOL_ACTION_NAMES', 'ToolActionName', TOOL_ACTION_NAMES),
    ...literal('TerminalRunStatus', 'How a run ended; reaching one releases its workspace.', [
      ...TERMINAL_RUN_STATUSES,
    ]),
    ...tuple('TERMINAL_RUN_STATUSES', 'TerminalRunStatus', TERMINAL_RUN_STATUSES),
    ...literal('ProcessSignal', 'A signal a caller may send to a background process.', [
      ...PROCESS_SIGNALS,
    ]),
    ...literal('Scope', 'A rung of the consent ladder, lowest first.', [...SCOPES]),
    ...literal('Need', 'A need an environment hint may declare.', [...NEEDS]),
    ...literal('TokenKind', 'A token kind: a tool loop holds `agent`, a person `person`.', [
      ...TOKEN_KINDS,
    ]),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

/** `tool-definition.json` as the contract makes it now. */
export function renderToolDefinition(): string {
  return `${JSON.stringify(workbenchToolDefinition(), null, 2)}\n`;
}

/** The generated files: name, and their text now. */
export function pythonSdkFiles(): { name: string; text: string }[] {
  return [
    { name: '_contract.py', text: renderPythonContract() },
    { name: 'tool-definition.json', text: renderToolDefinition() },
  ];
}

/** The generated files whose text in the package is not what the contract makes now. */
export function stalePythonSdkFiles(): string[] {
  return pythonSdkFiles()
    .filter(({ name, text }) => {
      try {
        return readFileSync(resolve(PYTHON_PACKAGE, name), 'utf8') !== text;
      } catch {
        return true;
      }
    })
    .map(({ name }) => name);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  for (const { name, text } of pythonSdkFiles()) {
    writeFileSync(resolve(PYTHON_PACKAGE, name), text);
    process.stdout.write(`wrote ${resolve(PYTHON_PACKAGE, name)}\n`);
  }
}
