/**
 * Headers that belong to one hop and are not passed on (RFC 9110 section 7.6.1), so
 * the proxy speaks for itself on each side: `Connection` and what it names,
 * `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding` (Node frames bodies
 * itself) and `Upgrade`. Pure.
 *
 * @module
 */

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The end-to-end headers of `raw` (Node's `rawHeaders`: name, value, name, ...), as
 * an object for `http.request` (repeated names as arrays), without `drop` (lower case).
 */
export function endToEndHeaders(
  raw: readonly string[],
  drop: readonly string[] = [],
): Record<string, string | string[]> {
  const named = connectionTokens(raw);
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || named.has(name) || drop.includes(name)) continue;
    const value = raw[i + 1]!;
    const prior = out[name];
    out[name] =
      prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return out;
}

/**
 * `raw` without hop-by-hop headers and those `keep` refuses, still as a flat
 * name, value list (for `writeHead`, which keeps their order and case).
 */
export function endToEndRaw(
  raw: readonly string[],
  keep: (name: string, value: string) => boolean = () => true,
): string[] {
  const named = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower) || !keep(lower, raw[i + 1]!)) continue;
    out.push(name, raw[i + 1]!);
  }
  return out;
}

/** Header names a `Connection` header lists: they are hop-by-hop too. */
function connectionTokens(raw: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const t of raw[i + 1]!.split(',')) names.add(t.trim().toLowerCase());
  }
  return names;
}
