function formatPrice(cents, currency = "EUR") {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")} ${currency}`;
}

/** One line per item, then the total; refunds are negative amounts. */
export function invoiceText(items, currency = "EUR") {
  const lines = items.map((item) => `${item.label}: ${formatPrice(item.cents, currency)}`);
  const total = items.reduce((sum, item) => sum + item.cents, 0);
  return [...lines, `Total: ${formatPrice(total, currency)}`].join("\n");
}
