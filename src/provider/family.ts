/**
 * Request parameters that depend on the model family.
 *
 * OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and its variants except gpt-5-chat) accept
 * only the default temperature and answer 400 "Unsupported value: 'temperature'" to anything
 * else. @langchain/openai has the same rule (`isReasoningModel` in its utils/misc), but its
 * package exports do not include it, so it is restated here, and extended to names with a
 * router's vendor prefix ("openai/o3-mini" on OpenRouter).
 */
export function isReasoningModel(model: string): boolean {
  const name = model.trim().toLowerCase().split("/").pop() ?? "";
  if (/^o\d/.test(name)) return true;
  return name.startsWith("gpt-5") && !name.startsWith("gpt-5-chat");
}

/** Temperature for models that take one: deterministic edits. */
export const DEFAULT_TEMPERATURE = 0;

/**
 * The temperature to send: the user's setting when there is one ("default" means send none),
 * otherwise none for reasoning models and DEFAULT_TEMPERATURE for the rest.
 */
export function temperatureFor(model: string, setting: number | "default" | undefined): number | undefined {
  if (setting === "default") return undefined;
  if (typeof setting === "number") return setting;
  return isReasoningModel(model) ? undefined : DEFAULT_TEMPERATURE;
}
