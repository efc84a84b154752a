/**
 * The `memql tokens` command lines: an operator's management of users' API tokens.
 * Pure, like the rest of the parser.
 */
import { isTokenKind, type TokenKind } from '../../src/client/index.js';
import { take, UsageError } from './cli-usage.js';

/** A parsed `tokens` subcommand. */
export type TokenCliCommand =
  | { kind: 'tokens-create'; userId: string; label?: string; tokenKind?: TokenKind }
  | { kind: 'tokens-list'; userId?: string }
  | { kind: 'tokens-revoke'; tokenId: string };

/** The options these subcommands read. */
export interface TokenOptionValues {
  readonly label?: string;
  readonly kind?: string;
  readonly user?: string;
}

/** `memql tokens create | ls | revoke`. */
export function parseTokens(
  sub: string | undefined,
  rest: readonly string[],
  v: TokenOptionValues,
): TokenCliCommand {
  if (sub === 'create') {
    const [userId] = take(rest, ['<userId>'], 'tokens create');
    if (v.kind !== undefined && !isTokenKind(v.kind)) {
      throw new UsageError(
        `tokens create: --kind must be agent (a tool loop's) or person (the user's own), not "${v.kind}"`,
      );
    }
    return {
      kind: 'tokens-create',
      userId: userId!,
      ...(v.label === undefined ? {} : { label: v.label }),
      ...(v.kind === undefined ? {} : { tokenKind: v.kind }),
    } as const;
  }
  if (sub === 'ls' || sub === 'list') {
    take(rest, [], `tokens ${sub}`);
    return {
      kind: 'tokens-list',
      ...(v.user === undefined ? {} : { userId: v.user }),
    } as const;
  }
  if (sub === 'revoke') {
    return { kind: 'tokens-revoke', tokenId: take(rest, ['<tokenId>'], 'tokens revoke')[0]! };
  }
  throw new UsageError(`tokens: expected create, ls or revoke, not "${sub ?? ''}"`);
}
