/**
 * The `memql network` command lines and the `--allow`/`--secret` options of
 * `memql runs create`: which hosts a run's commands may reach (within the operator's
 * ceiling) and which operator secrets it opts into. Pure, like the rest of the parser.
 */
import { take, UsageError } from './cli-usage.js';

/** A parsed `network` subcommand. */
export type NetworkCliCommand =
  | { kind: 'network-show'; runId: string }
  /** Adds hosts and secrets to what the run has. */
  | { kind: 'network-allow'; runId: string; allow: string[]; secrets: string[] }
  /** Replaces what the run has with exactly these. */
  | { kind: 'network-set'; runId: string; allow: string[]; secrets: string[] }
  | { kind: 'network-clear'; runId: string };

/** The options these subcommands read. */
export interface NetworkOptionValues {
  readonly secret?: string[];
}

/**
 * Host rules from words and `--allow` values, each of which may hold several separated
 * by commas (`pypi.org,files.pythonhosted.org`); duplicates dropped, order kept. The
 * server checks each rule; here only empty entries are refused.
 */
export function hostList(words: readonly string[], what: string): string[] {
  const hosts: string[] = [];
  for (const word of words) {
    for (const part of word.split(',')) {
      const host = part.trim();
      if (host === '') {
        throw new UsageError(`${what}: an empty host in "${word}"; separate hosts with commas`);
      }
      if (!hosts.includes(host)) hosts.push(host);
    }
  }
  return hosts;
}

/** `--secret NAME` values, deduplicated. */
export function secretList(values: readonly string[] | undefined): string[] {
  return [...new Set(values ?? [])];
}

/** `memql network show | allow | set | clear <runId> ...`. */
export function parseNetwork(
  sub: string | undefined,
  rest: readonly string[],
  v: NetworkOptionValues,
): NetworkCliCommand {
  if (sub === 'show') {
    return { kind: 'network-show', runId: take(rest, ['<runId>'], 'network show')[0]! };
  }
  if (sub === 'clear') {
    return { kind: 'network-clear', runId: take(rest, ['<runId>'], 'network clear')[0]! };
  }
  if (sub === 'allow' || sub === 'set') {
    const [runId, ...words] = take(rest, ['<runId>'], `network ${sub}`, Number.POSITIVE_INFINITY);
    const allow = hostList(words, `network ${sub}`);
    const secrets = secretList(v.secret);
    if (sub === 'allow' && allow.length === 0 && secrets.length === 0) {
      throw new UsageError(
        'network allow: name the hosts to add: memql network allow <runId> HOST[,HOST...] [--secret NAME]',
      );
    }
    return {
      kind: sub === 'allow' ? 'network-allow' : 'network-set',
      runId: runId!,
      allow,
      secrets,
    };
  }
  throw new UsageError(`network: expected show, allow, set or clear, not "${sub ?? ''}"`);
}
