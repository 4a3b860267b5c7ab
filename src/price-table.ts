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

export const DEFAULT_PRICES: Readonly<PriceTable> = {
  "gpt-4o": { input: 2.5, output: 10, cachedInput: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cachedInput: 0.075 },
  "gpt-4.1": { input: 2, output: 8, cachedInput: 0.5 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cachedInput: 0.1 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4, cachedInput: 0.025 },
  "gpt-5": { input: 1.25, output: 10, cachedInput: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cachedInput: 0.025 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cachedInput: 0.005 },
  "gpt-5-pro": { input: 15, output: 120 },
  o3: { input: 2, output: 8, cachedInput: 0.5 },
  "o3-mini": { input: 1.1, output: 4.4, cachedInput: 0.55 },
  "o3-pro": { input: 20, output: 80 },
  "o4-mini": { input: 1.1, output: 4.4, cachedInput: 0.275 },
  "deepseek-chat": { input: 0.28, output: 0.42, cachedInput: 0.028 },
  "deepseek-reasoner": { input: 0.28, output: 0.42, cachedInput: 0.028 },
  "claude-sonnet-4": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-sonnet-4.5": { input: 3, output: 15, cachedInput: 0.3 },
  "claude-haiku-4.5": { input: 1, output: 5, cachedInput: 0.1 },
  "claude-opus-4.1": { input: 15, output: 75, cachedInput: 1.5 },
};

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
