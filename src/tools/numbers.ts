import { z } from "zod";

/**
 * A whole number of at least `min`. zod's `.int()` adds the safe-integer range to the JSON
 * schema (`minimum: -9007199254740991`), which tells the model nothing true about a 1-based line;
 * the range is still enforced, only the schema the model sees states the real lower bound alone.
 */
export function wholeNumber(min: number, message: string) {
  return z.number().int(message).min(min, message).meta({ maximum: undefined });
}
