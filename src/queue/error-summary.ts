/**
 * Errors reach logs only as a name, a code and a scrubbed message: an executor's
 * error may quote what it was running, so every string of the command's request
 * (command text, env values, stdin) is cut out of the message first.
 */

/** What a log line may say about an error. */
export interface ErrorSummary {
  errorName: string;
  errorMessage: string;
}

/** Strings shorter than this are not scrubbed: they would shred ordinary words. */
const MIN_SECRET_LENGTH = 4;
/** Pieces of a string (words of a command) shorter than this are not scrubbed. */
const MIN_PIECE_LENGTH = 8;
const MAX_MESSAGE_LENGTH = 300;

/** Every string (and object key) inside a request, longest first. */
export function requestStrings(request: unknown): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, depth: number) => {
    if (depth > 8) return;
    if (typeof value === 'string') {
      if (value.length >= MIN_SECRET_LENGTH) found.add(value);
      // Pieces too, so a message quoting part of a command still loses the part.
      for (const piece of value.split(/[\s;&|'"`$()<>=]+/)) {
        if (piece.length >= MIN_PIECE_LENGTH) found.add(piece);
      }
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v, depth + 1);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        visit(k, depth + 1);
        visit(v, depth + 1);
      }
    }
  };
  visit(request, 0);
  return [...found].sort((a, b) => b.length - a.length);
}

/** Summarises `err` for a log line, with every string in `secrets` cut out. */
export function summarizeError(err: unknown, secrets: readonly string[] = []): ErrorSummary {
  const e = err instanceof Error ? err : null;
  let message = e ? e.message : String(err);
  for (const s of secrets) message = message.split(s).join('[redacted]');
  if (message.length > MAX_MESSAGE_LENGTH) message = `${message.slice(0, MAX_MESSAGE_LENGTH)}…`;
  const code = (err as { code?: unknown } | null)?.code;
  const name = e?.name ?? typeof err;
  return {
    errorName: typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? `${name}:${code}` : name,
    errorMessage: message,
  };
}
