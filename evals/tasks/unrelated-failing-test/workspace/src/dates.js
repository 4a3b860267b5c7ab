/** Days from one ISO date (YYYY-MM-DD) to another. */
export function daysBetween(from, to) {
  return Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) + 1;
}
