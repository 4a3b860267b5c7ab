import { type OfferedTool, parseJson } from "./call-context.js";
import { makeToolCallId } from "./ids.js";

/**
 * Tool calls a model wrote as text: vLLM without `--tool-call-parser`, llama.cpp without
 * `--jinja`, older Ollama and Ollama's qwen2.5-coder put the call in `content`, as Hermes
 * `<tool_call>{"name":…,"arguments":…}</tool_call>` blocks or as a bare JSON object. Recovered
 * only when every block is well formed, names an offered tool, and its arguments fit that
 * tool's schema; anything else stays text.
 */

export interface RecoveredCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Recovery {
  calls: RecoveredCall[];
  /** The text around the calls (usually nothing). */
  text: string;
  form: "<tool_call> block" | "JSON object";
}

type Json = Record<string, unknown>;

const HERMES = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;
const FENCE = /^```(?:json)?\s*([\s\S]*?)\s*```$/;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** JSON schema's types; another (or none) fits anything. */
const TYPE_CHECKS: Readonly<Record<string, (value: unknown) => boolean>> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number",
  integer: Number.isInteger,
  boolean: (v) => typeof v === "boolean",
  array: Array.isArray,
  object: isObject,
  null: (v) => v === null,
};

function typeFits(value: unknown, type: unknown): boolean {
  if (Array.isArray(type)) return type.some((t) => typeFits(value, t));
  return typeof type !== "string" || !Object.hasOwn(TYPE_CHECKS, type) || TYPE_CHECKS[type]!(value);
}

/** The checks that tell a call from a look-alike: required keys, no unknown keys when closed, top-level types. */
export function argsFit(args: Json, schema: unknown): boolean {
  if (!isObject(schema)) return true;
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  if (required.some((key) => args[key] === undefined)) return false;
  for (const [key, value] of Object.entries(args)) {
    const prop = properties[key];
    if (prop === undefined) {
      if (schema.additionalProperties === false) return false;
      continue;
    }
    if (isObject(prop) && !typeFits(value, prop.type)) return false;
  }
  return true;
}

function toCall(value: unknown, offered: readonly OfferedTool[]): RecoveredCall | undefined {
  if (!isObject(value) || typeof value.name !== "string") return undefined;
  const tool = offered.find((t) => t.name === value.name);
  if (!tool) return undefined;
  let args = value.arguments ?? value.parameters ?? {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  if (!isObject(args) || !(tool.fits ? tool.fits(args) : argsFit(args, tool.parameters))) return undefined;
  return { id: makeToolCallId(), name: value.name, args };
}

export function recoverTextToolCalls(
  content: string,
  offered: readonly OfferedTool[] | undefined,
): Recovery | undefined {
  if (!offered || offered.length === 0) return undefined;
  const blocks = [...content.matchAll(HERMES)];
  if (blocks.length > 0) {
    const calls = blocks.map((b) => toCall(parseJson(b[1]!), offered));
    if (calls.some((c) => c === undefined)) return undefined;
    return { calls: calls as RecoveredCall[], text: content.replace(HERMES, "").trim(), form: "<tool_call> block" };
  }
  const trimmed = content.trim();
  const bare = (FENCE.exec(trimmed)?.[1] ?? trimmed).trim();
  if (!bare.startsWith("{") && !bare.startsWith("[")) return undefined;
  const value = parseJson(bare);
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return undefined;
  const calls = items.map((item) => toCall(item, offered));
  if (calls.some((c) => c === undefined)) return undefined;
  return { calls: calls as RecoveredCall[], text: "", form: "JSON object" };
}
