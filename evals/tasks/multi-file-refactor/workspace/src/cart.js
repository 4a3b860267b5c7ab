function formatPrice(cents, currency = "EUR") {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")} ${currency}`;
}

/** Total of the cart's lines, in cents. */
export function cartTotal(lines) {
  return lines.reduce((sum, line) => sum + line.unitCents * line.quantity, 0);
}

/** "3 items, 42.50 EUR" */
export function cartSummary(lines, currency = "EUR") {
  const count = lines.reduce((n, line) => n + line.quantity, 0);
  return `${count} item${count === 1 ? "" : "s"}, ${formatPrice(cartTotal(lines), currency)}`;
}
