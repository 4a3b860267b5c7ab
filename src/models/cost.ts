import { DEFAULT_PRICES, type ModelPrice, type PriceTable } from "../price-table.js";

export { DEFAULT_PRICES, type ModelPrice, parsePriceTable, type PriceTable } from "../price-table.js";

/**
 * What a run cost, for models whose price is known. Prices are US dollars per million tokens,
 * as the providers list them (checked late 2025; they change, so the table can be overridden
 * with MINI_CURSOR_PRICES). A model not in the table has no cost rather than a wrong one.
 */

/**
 * The price of a model: overrides first, then the table; an exact name, or the longest known
 * name it extends with a dash ("gpt-4o-mini-2024-07-18" is gpt-4o-mini, not gpt-4o).
 */
export function priceFor(model: string | undefined, overrides: PriceTable = {}): ModelPrice | undefined {
  if (!model) return undefined;
  const full = model.trim().toLowerCase();
  // "openai/gpt-4o-2024-08-06" -> "gpt-4o-2024-08-06": routers (OpenRouter) prefix the vendor.
  const bare = full.slice(full.lastIndexOf("/") + 1);
  for (const table of [overrides, DEFAULT_PRICES]) {
    const lowered = new Map(Object.entries(table).map(([k, v]) => [k.toLowerCase(), v]));
    const exact = lowered.get(full) ?? lowered.get(bare);
    if (exact) return exact;
    let best: [string, ModelPrice] | undefined;
    for (const [name, price] of lowered) {
      if ((bare.startsWith(`${name}-`) || full.startsWith(`${name}-`)) && (!best || name.length > best[0].length))
        best = [name, price];
    }
    if (best) return best[1];
  }
  return undefined;
}

export interface TokenCounts {
  input: number;
  output: number;
  /** Input tokens the provider served from its cache (part of `input`). */
  cachedInput?: number;
}

/** USD for one request. */
export function costOf(tokens: TokenCounts, price: ModelPrice): number {
  const cached = Math.min(tokens.cachedInput ?? 0, tokens.input);
  const cachedPrice = price.cachedInput ?? price.input;
  return ((tokens.input - cached) * price.input + cached * cachedPrice + tokens.output * price.output) / 1_000_000;
}

/** "$0.0042", "$0.12", "$3.40". */
export function formatCost(usd: number): string {
  if (usd === 0) return "$0.00";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  if (usd < 1) return `$${usd.toFixed(3)}`;
  return `$${usd.toFixed(2)}`;
}
