import { ConfigError, type ConfigIssue, formatIssue } from './config-error.js';
import { parseHostPort } from './host-port.js';

/**
 * One seed from `MEMQL_WORKER_PEERS`: a node type and the address to dial for
 * it. The mesh resolves `host` to all of its addresses (a headless Service
 * gives one per replica); this module only parses.
 */
export interface PeerSeed {
  /** The node type served there, a lowercase identifier: `workbench`, `worker`, ... */
  readonly type: string;
  /** DNS name, IPv4 address, or IPv6 address without brackets. */
  readonly host: string;
  /** TCP port, 1..65535. */
  readonly port: number;
  /** The entry exactly as the operator wrote it, trimmed, for messages that quote it. */
  readonly raw: string;
}

/** The result of {@link parsePeerSeeds}. */
export interface ParsedPeerSeeds {
  /** Every seed, in the order written. Duplicates are kept: dialling is the mesh's job. */
  readonly seeds: PeerSeed[];
}

const PEER_TYPE = /^[a-z][a-z0-9_-]*$/;

/**
 * Parses a `MEMQL_WORKER_PEERS` value: `type=host:port` entries separated by
 * commas, e.g. `workbench=workbench:50060, worker=[::1]:50061`. Whitespace
 * around entries and around `=` is tolerated, and so are empty entries (a
 * trailing comma). Pure.
 *
 * It never drops a seed: a seed silently lost at parse time once left a
 * remote-only agent with no peer and, through a fallback, running every call on
 * its own disk. So any malformed entry fails the whole value, with one issue
 * per bad entry, each naming that entry.
 *
 * @param value - the variable's value.
 * @param variable - the variable named in issues. Default `MEMQL_WORKER_PEERS`.
 * @throws ConfigError listing every malformed entry.
 */
export function parsePeerSeeds(value: string, variable = 'MEMQL_WORKER_PEERS'): ParsedPeerSeeds {
  const seeds: PeerSeed[] = [];
  const issues: ConfigIssue[] = [];
  for (const part of value.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const seed = parseEntry(entry);
    if (typeof seed === 'string') {
      issues.push(formatIssue({ variable, value: value.trim(), entry, expected: seed }));
    } else {
      seeds.push(seed);
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { seeds };
}

/** One entry as a seed, or what was expected of it. */
function parseEntry(entry: string): PeerSeed | string {
  const shape = 'type=host:port, e.g. workbench=workbench:50060';
  const eq = entry.indexOf('=');
  if (eq < 0) return `${shape}; the "type=" is missing`;
  const type = entry.slice(0, eq).trim();
  const address = entry.slice(eq + 1).trim();
  if (type === '') return `${shape}; the type before "=" is missing`;
  if (!PEER_TYPE.test(type)) {
    return `${shape}; the type ${JSON.stringify(type)} must be a lowercase identifier (a-z, 0-9, "_", "-")`;
  }
  const parsed = parseHostPort(address);
  if (!parsed.ok) return `${shape}; ${parsed.expected}`;
  return { type, host: parsed.value.host, port: parsed.value.port, raw: entry };
}
