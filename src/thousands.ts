/**
 * A count with thousands separators, as `n.toLocaleString("en-US")` writes it (30000 → "30,000"),
 * without ICU: the first toLocaleString of a process loads its number formatting, ~20 ms that the
 * tool descriptions put before the first model request. Top level (no imports): tools, MCP
 * results and compaction all use it.
 */
export function withThousands(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString("en-US");
  return String(n).replace(/\B(?=(\d{3})+$)/g, ",");
}
