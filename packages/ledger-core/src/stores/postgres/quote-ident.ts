/** A schema (or other) name as a quoted identifier, taken exactly as written. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
