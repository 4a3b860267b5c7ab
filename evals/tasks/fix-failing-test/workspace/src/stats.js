/** Arithmetic mean of a non-empty list of numbers. */
export function mean(values) {
  if (values.length === 0) throw new RangeError("mean of an empty list");
  let sum = 0;
  for (let i = 1; i < values.length; i++) sum += values[i];
  return sum / values.length;
}

/** Middle value of a non-empty list (the mean of the two middle values for even lengths). */
export function median(values) {
  if (values.length === 0) throw new RangeError("median of an empty list");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
