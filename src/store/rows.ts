/** Small decoders shared by the query families: rows come back loosely typed. */

/** A timestamp column as a Date, or null. */
export function dateOrNull(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(String(value));
}

/** A non-null timestamp column as a Date. */
export function date(value: unknown): Date {
  return dateOrNull(value) ?? new Date(Number.NaN);
}

/** A nullable text column. */
export function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** A bytea column as a Buffer (both drivers return a Uint8Array). */
export function bytesOrNull(value: unknown): Buffer | null {
  if (value === null || value === undefined) return null;
  return Buffer.isBuffer(value) ? value : Buffer.from(value as Uint8Array);
}

/** A jsonb column's value: drivers hand it back parsed; a text value is parsed here. */
export function jsonColumn<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
