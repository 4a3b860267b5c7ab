import { z } from "zod";

/**
 * The price table and its parser, below settings.ts (which parses MINI_CURSOR_PRICES with it)
 * so that settings imports nothing above it. Prices are US dollars per million tokens, as the
 * providers list them (checked late 2025; they change, so the table can be overridden with
 * MINI_CURSOR_PRICES). models/cost.ts looks prices up and computes costs.
 */

export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
  /** USD per million input tokens served from the provider's prompt cache, when cheaper. */
  cachedInput?: number;
}

export type PriceTable = Record<string, ModelPrice>;

/** model, then USD per million input, output and cached input tokens (no cached price: no discount). */
type PriceRow = readonly [model: string, input: number, output: number, cachedInput?: number];

const PRICE_ROWS: readonly PriceRow[] = [
  ["gpt-4o", 2.5, 10, 1.25],
  ["gpt-4o-mini", 0.15, 0.6, 0.075],
  ["gpt-4.1", 2, 8, 0.5],
  ["gpt-4.1-mini", 0.4, 1.6, 0.1],
  ["gpt-4.1-nano", 0.1, 0.4, 0.025],
  ["gpt-5", 1.25, 10, 0.125],
  ["gpt-5-mini", 0.25, 2, 0.025],
  ["gpt-5-nano", 0.05, 0.4, 0.005],
  ["gpt-5-pro", 15, 120],
  ["o3", 2, 8, 0.5],
  ["o3-mini", 1.1, 4.4, 0.55],
  ["o3-pro", 20, 80],
  ["o4-mini", 1.1, 4.4, 0.275],
  ["deepseek-chat", 0.28, 0.42, 0.028],
  ["deepseek-reasoner", 0.28, 0.42, 0.028],
  ["claude-sonnet-4", 3, 15, 0.3],
  ["claude-sonnet-4.5", 3, 15, 0.3],
  ["claude-haiku-4.5", 1, 5, 0.1],
  ["claude-opus-4.1", 15, 75, 1.5],
];

export const DEFAULT_PRICES: Readonly<PriceTable> = Object.fromEntries(
  PRICE_ROWS.map(([model, input, output, cachedInput]) => [
    model,
    cachedInput === undefined ? { input, output } : { input, output, cachedInput },
  ]),
);

const priceSchema = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
});
const tableSchema = z.record(z.string().min(1), priceSchema);

/**
 * Parses a price override such as `{"my-model": {"input": 0.5, "output": 1.5}}` (USD per million
 * tokens). Throws an Error whose message says what is wrong.
 */
export function parsePriceTable(json: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new Error(`is not JSON (${(err as Error).message})`);
  }
  const parsed = tableSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(
      `${issue.path.join(".") || "value"}: ${issue.message}; expected {"model": {"input": 0.5, "output": 1.5}} in USD per million tokens`,
    );
  }
  return parsed.data;
}
