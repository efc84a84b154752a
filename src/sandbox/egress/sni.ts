/**
 * The server name a TLS ClientHello asks for (the SNI extension), read from the first
 * bytes a client sends in a CONNECT tunnel. Pure: bytes in, a verdict out.
 *
 * The proxy dials the address it checked for the CONNECT host, so a different name in
 * the ClientHello cannot reach another address; it could still ask a shared front (a
 * CDN) for another site on that address, which is why the name must match. Only what
 * the check needs is parsed: the record layer (a ClientHello may span records), the
 * ClientHello's fixed fields, and the `server_name` extension (RFC 6066 section 3).
 *
 * @module
 */

/** What the first bytes of a tunnel turned out to be. */
export type ClientHelloPeek =
  /** Not enough bytes yet: read more and ask again. */
  | { readonly kind: 'incomplete' }
  /** A ClientHello; `serverName` is null when it carries no SNI. */
  | { readonly kind: 'hello'; readonly serverName: string | null }
  /** The bytes do not start a TLS handshake (plain text, SSLv2, another protocol). */
  | { readonly kind: 'not_tls' }
  /** A TLS handshake record whose ClientHello cannot be read. */
  | { readonly kind: 'malformed'; readonly problem: string };

const RECORD_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXT_SERVER_NAME = 0;
const NAME_TYPE_HOST = 0;
/** A TLS record's payload is at most 2^14 bytes (plus expansion allowance). */
const MAX_RECORD = 16_384 + 2_048;
/** Longest ClientHello accepted; real ones are under 2 KiB, post-quantum key shares included. */
export const MAX_CLIENT_HELLO = 65_536;

/**
 * Reads the ClientHello at the start of `bytes`. Answers `incomplete` while the
 * handshake message is not whole (the caller bounds how long and how much it reads).
 */
export function peekClientHello(bytes: Uint8Array): ClientHelloPeek {
  if (bytes.length === 0) return { kind: 'incomplete' };
  // Record header: type, a 3.x version, a length. SSLv2's 0x80 form is not TLS here.
  if (bytes[0] !== RECORD_HANDSHAKE) return { kind: 'not_tls' };
  if (bytes.length >= 2 && bytes[1] !== 3) return { kind: 'not_tls' };
  const message = handshakeMessage(bytes);
  if (message.kind !== 'message') return message;
  return parseClientHello(message.body);
}

type Reassembled =
  | { readonly kind: 'message'; readonly body: Uint8Array }
  | { readonly kind: 'incomplete' }
  | { readonly kind: 'malformed'; readonly problem: string };

/** The first handshake message, its fragments gathered from consecutive records. */
function handshakeMessage(bytes: Uint8Array): Reassembled {
  const fragments: Uint8Array[] = [];
  let gathered = 0;
  let needed = -1;
  let at = 0;
  while (needed < 0 || gathered < needed) {
    if (bytes.length < at + 5) return { kind: 'incomplete' };
    if (bytes[at] !== RECORD_HANDSHAKE) {
      return {
        kind: 'malformed',
        problem: 'the ClientHello is interrupted by another record type',
      };
    }
    const length = u16(bytes, at + 3);
    if (length === 0 || length > MAX_RECORD) {
      return { kind: 'malformed', problem: `a handshake record of ${length} bytes` };
    }
    if (bytes.length < at + 5 + length) return { kind: 'incomplete' };
    fragments.push(bytes.subarray(at + 5, at + 5 + length));
    gathered += length;
    at += 5 + length;
    if (needed < 0 && gathered >= 4) {
      const head = concat(fragments, 4);
      if (head[0] !== HANDSHAKE_CLIENT_HELLO) {
        return { kind: 'malformed', problem: 'the first handshake message is not a ClientHello' };
      }
      needed = 4 + ((head[1]! << 16) | (head[2]! << 8) | head[3]!);
      if (needed > MAX_CLIENT_HELLO) {
        return { kind: 'malformed', problem: `a ClientHello of ${needed} bytes` };
      }
    }
  }
  return { kind: 'message', body: concat(fragments, needed).subarray(4) };
}

/** Walks the ClientHello's fixed fields to its extensions and reads `server_name`. */
function parseClientHello(body: Uint8Array): ClientHelloPeek {
  const r = new Reader(body);
  r.skip(2 + 32); // legacy_version, random
  r.skip(r.u8()); // legacy_session_id
  r.skip(r.u16()); // cipher_suites
  r.skip(r.u8()); // legacy_compression_methods
  if (r.failed) return { kind: 'malformed', problem: 'the ClientHello is truncated' };
  if (r.remaining === 0) return { kind: 'hello', serverName: null }; // no extensions at all
  const extensions = r.sub(r.u16());
  if (r.failed || r.remaining !== 0) {
    return { kind: 'malformed', problem: 'the extensions do not fill the ClientHello' };
  }
  let serverName: string | null = null;
  let seen = false;
  while (extensions.remaining > 0) {
    const type = extensions.u16();
    const data = extensions.sub(extensions.u16());
    if (extensions.failed) return { kind: 'malformed', problem: 'an extension is truncated' };
    if (type !== EXT_SERVER_NAME) continue;
    // Two server_name extensions could let one reader see one name and another reader the other.
    if (seen) return { kind: 'malformed', problem: 'two server_name extensions' };
    seen = true;
    const name = readServerName(data);
    if (typeof name !== 'string' && name !== null) return name;
    serverName = name;
  }
  return { kind: 'hello', serverName };
}

function readServerName(data: Reader): string | null | ClientHelloPeek {
  const list = data.sub(data.u16());
  if (data.failed || data.remaining !== 0) {
    return { kind: 'malformed', problem: 'the server_name list is truncated' };
  }
  let host: string | null = null;
  while (list.remaining > 0) {
    const type = list.u8();
    const name = list.bytes(list.u16());
    if (list.failed) return { kind: 'malformed', problem: 'a server name is truncated' };
    if (type !== NAME_TYPE_HOST) continue;
    if (host !== null) return { kind: 'malformed', problem: 'two host names in server_name' };
    if (name.length === 0 || name.some((b) => b < 0x21 || b > 0x7e)) {
      return { kind: 'malformed', problem: 'the server name is not printable ASCII' };
    }
    host = String.fromCharCode(...name);
  }
  return host;
}

/** A bounds-checked cursor: a read past the end sets `failed` and yields zeros. */
class Reader {
  failed = false;
  private at = 0;
  constructor(private readonly data: Uint8Array) {}
  get remaining(): number {
    return this.data.length - this.at;
  }
  private take(n: number): Uint8Array {
    if (this.failed || n > this.remaining) {
      this.failed = true;
      return new Uint8Array(n);
    }
    const out = this.data.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  u8(): number {
    return this.take(1)[0]!;
  }
  u16(): number {
    const b = this.take(2);
    return (b[0]! << 8) | b[1]!;
  }
  skip(n: number): void {
    this.take(n);
  }
  bytes(n: number): Uint8Array {
    return this.take(n);
  }
  sub(n: number): Reader {
    const inner = new Reader(this.take(n));
    inner.failed = this.failed;
    return inner;
  }
}

function u16(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 8) | bytes[at + 1]!;
}

/** The first `n` bytes of the fragments, as one array. */
function concat(fragments: readonly Uint8Array[], n: number): Uint8Array {
  const out = new Uint8Array(n);
  let at = 0;
  for (const f of fragments) {
    if (at >= n) break;
    const part = f.subarray(0, n - at);
    out.set(part, at);
    at += part.length;
  }
  return out;
}
