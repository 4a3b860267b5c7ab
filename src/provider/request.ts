import type { Json, ProviderCall } from "./call-context.js";
import { isReasoningModel } from "./family.js";

/**
 * The chat-completions request body as the provider should get it, rewritten after LangChain
 * built it.
 */

export interface RequestOptions {
  /** JSON object merged over the body (MINI_CURSOR_EXTRA_BODY). */
  extraBody?: Json;
  /** false: no `stream_options` (Mistral answers 422, some Bedrock/Databricks gateways 400). */
  streamOptions: boolean;
  /** false: ask for a plain JSON completion; the wire turns it into a stream for LangChain. */
  stream: boolean;
  /** true: no `additionalProperties` in tool schemas (gateways that translate to Gemini reject it). */
  stripAdditionalProperties: boolean;
}

/** Schema keys no provider needs and some reject. */
function cleanSchema(schema: unknown, stripAdditional: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => cleanSchema(s, stripAdditional));
  if (!schema || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === "$schema") continue;
    if (stripAdditional && key === "additionalProperties") continue;
    out[key] = cleanSchema(value, stripAdditional);
  }
  return out;
}

function isEmptyContent(content: unknown): boolean {
  if (content === undefined || content === null || content === "") return true;
  return Array.isArray(content) && content.every((p) => p && typeof p === "object" && p.type === "text" && !p.text);
}

/** The assistant message as the provider wants it back: null content beside calls, its reasoning and signatures. */
function assistantMessage(message: Json, call: ProviderCall | undefined): Json {
  const calls = message.tool_calls as Json[] | undefined;
  if (!Array.isArray(calls) || calls.length === 0) return message;
  const out: Json = { ...message };
  // Bedrock-backed and Anthropic-compatible shims reject "" beside tool_calls; OpenAI documents null.
  if (isEmptyContent(out.content)) out.content = null;
  if (!call) return out;
  const echoes = calls.map((c) => call.echoes.get(c.id));
  const reasoning = echoes.find((e) => e?.reasoning_content !== undefined)?.reasoning_content;
  if (reasoning !== undefined) out.reasoning_content = reasoning;
  out.tool_calls = calls.map((c, i) =>
    echoes[i]?.extra_content !== undefined ? { ...c, extra_content: echoes[i]!.extra_content } : c,
  );
  return out;
}

export function rewriteRequest(
  body: Json,
  options: RequestOptions,
  dropped: ReadonlySet<string>,
  call: ProviderCall | undefined,
): Json {
  const out: Json = { ...body, ...(options.extraBody ?? {}) };
  if (!options.streamOptions) delete out.stream_options;
  if (!options.stream && out.stream) {
    out.stream = false;
    delete out.stream_options;
  }
  // Reasoning models take max_completion_tokens; a max_tokens from the extra body is renamed.
  if (
    typeof out.model === "string" &&
    isReasoningModel(out.model) &&
    out.max_tokens !== undefined &&
    out.max_completion_tokens === undefined
  ) {
    out.max_completion_tokens = out.max_tokens;
    delete out.max_tokens;
  }
  if (Array.isArray(out.tools)) {
    out.tools = out.tools.map((t: Json) =>
      t?.function?.parameters
        ? {
            ...t,
            function: {
              ...t.function,
              parameters: cleanSchema(t.function.parameters, options.stripAdditionalProperties),
            },
          }
        : t,
    );
  }
  if (Array.isArray(out.messages))
    out.messages = out.messages.map((m: Json) => (m?.role === "assistant" ? assistantMessage(m, call) : m));
  for (const key of dropped) delete out[key];
  return out;
}

/** JSON-schema keywords some gateways refuse in tool schemas (Gemini's subset: `Unknown name "additionalProperties"`). */
const SCHEMA_KEYWORDS = ["additionalProperties", "$schema"];

/**
 * The schema keyword a 400/422 names, if the request's tool schemas carried it: the cue to send
 * the tools without it. `$schema` is never sent (cleanSchema), so in practice additionalProperties.
 */
export function rejectedSchemaKeyword(body: Json, errorText: string): string | undefined {
  if (!Array.isArray(body.tools)) return undefined;
  const schemas = JSON.stringify(body.tools.map((t: Json) => t?.function?.parameters ?? null));
  return SCHEMA_KEYWORDS.find((key) => errorText.includes(key) && schemas.includes(JSON.stringify(key)));
}

/** Words of an error that rejects a parameter. */
const REJECTION_WORDS =
  /unsupported|not supported|unrecognized|unknown|extra|not permitted|not allowed|invalid|unexpected/i;

/** Parameters that may be dropped when a provider rejects them; the conversation itself never is. */
const ESSENTIAL = new Set(["model", "messages", "tools", "stream"]);

/**
 * The parameter a 400/422 says is not supported, if it names one the request sent: OpenAI's
 * `param` field, Mistral's `loc: ["body", "stream_options"]`, or the name quoted in the message
 * ("Unsupported parameter: 'temperature'", "Unrecognized request argument supplied: …").
 */
export function rejectedParameter(body: Json, errorText: string, param: string | undefined): string | undefined {
  const sent = Object.keys(body).filter((k) => !ESSENTIAL.has(k));
  if (param && sent.includes(param)) return param;
  if (!REJECTION_WORDS.test(errorText)) return undefined;
  for (const key of sent) {
    // Quoted ('temperature', "stream_options" in a pydantic loc) or, for names no prose uses, bare.
    const named = new RegExp(`["'\`]${key}["'\`]${key.includes("_") ? `|\\b${key}\\b` : ""}`);
    if (named.test(errorText)) return key;
  }
  return undefined;
}
