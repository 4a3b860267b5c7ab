import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { HEAD_CHARS, MAX_OUTPUT_CHARS, TAIL_CHARS } from "../workspace/output-store.js";
import { withThousands } from "../thousands.js";

/**
 * What the model reads of an MCP tool's result, from the server's own content blocks (every
 * type the MCP spec defines): text as it is, an embedded text resource with its URI, a resource
 * link as its URI, name and type; images, audio and binary resources as a one-line note (the
 * chat-completions tool message carries text only, and base64 would fill the context). Bounded
 * like a command's output (head and tail with a notice between).
 */

/** A content block of a CallToolResult, as the spec defines them. */
interface McpBlock {
  type?: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  title?: string;
  description?: string;
  size?: number;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/** The parts of a CallToolResult read here. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  /** The result shape of protocol version 2024-10-07 and before. */
  toolResult?: unknown;
}

const n = (x: number) => withThousands(x);

/** Bytes of a base64 payload. */
function base64Bytes(data: string | undefined): number {
  if (!data) return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

function blockText(block: McpBlock): string {
  const type = block.mimeType ?? "unknown type";
  switch (block.type) {
    case "text":
      return block.text ?? "";
    case "image":
      return `[image (${type}, ${n(base64Bytes(block.data))} bytes) returned by the tool; images are not shown to you]`;
    case "audio":
      return `[audio (${type}, ${n(base64Bytes(block.data))} bytes) returned by the tool; audio is not passed on]`;
    case "resource_link": {
      const label = block.title ?? block.name;
      const details = [block.mimeType, block.size !== undefined ? `${n(block.size)} bytes` : undefined].filter(Boolean);
      return `[resource link: ${block.uri ?? "(no URI)"}${label ? ` "${label}"` : ""}${details.length > 0 ? ` (${details.join(", ")})` : ""}${block.description ? `: ${block.description}` : ""}]`;
    }
    case "resource": {
      const r = block.resource ?? {};
      const uri = r.uri ?? "(no URI)";
      if (typeof r.text === "string") return `[resource ${uri}${r.mimeType ? ` (${r.mimeType})` : ""}]\n${r.text}`;
      if (typeof r.blob === "string")
        return `[binary resource ${uri} (${r.mimeType ?? "unknown type"}, ${n(base64Bytes(r.blob))} bytes) returned by the tool; binary content is not passed on]`;
      return `[resource ${uri} (no content)]`;
    }
    default:
      return `[${block.type ?? "unknown"} content returned by the tool; not passed on]`;
  }
}

/** Cuts text longer than the cap to its head and tail, saying how much was left out. */
export function boundText(text: string, maxChars = MAX_OUTPUT_CHARS): string {
  if (text.length <= maxChars) return text;
  const head = text.slice(0, Math.min(HEAD_CHARS, Math.floor(maxChars / 3)));
  const tail = text.slice(text.length - Math.min(TAIL_CHARS, maxChars - head.length));
  const omitted = text.length - head.length - tail.length;
  return `${head}\n[... ${n(omitted)} characters of this MCP tool's result omitted; ask the tool for less (a narrower query or a page) if you need them.]\n${tail}`;
}

/** The blocks as text, unbounded (error results are quoted in a failure). */
export function mcpContentText(result: McpCallResult): string {
  const blocks = Array.isArray(result.content) ? (result.content as McpBlock[]) : [];
  let text = blocks.map((b) => (typeof b === "string" ? b : blockText(b))).join("\n");
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text === "" && result.toolResult !== undefined)
    text = typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult);
  return text;
}

/** The text of a tool's result, bounded. */
export function mcpResultText(result: McpCallResult): string {
  const text = mcpContentText(result);
  return boundText(text === "" ? "(the tool returned no content)" : text);
}

interface SchemaProperty {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: SchemaProperty[];
  oneOf?: SchemaProperty[];
  items?: SchemaProperty;
  description?: string;
}

function expectedType(p: SchemaProperty): string {
  if (p.enum) return `one of ${p.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  const alternatives = p.anyOf ?? p.oneOf;
  if (alternatives) return alternatives.map(expectedType).join(" or ");
  if (Array.isArray(p.type)) return p.type.join(" or ");
  if (p.type === "array" && p.items) return `array of ${expectedType(p.items)}`;
  return p.type ?? "any value";
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function fits(value: unknown, p: SchemaProperty): boolean {
  if (p.enum) return p.enum.some((v) => JSON.stringify(v) === JSON.stringify(value));
  const alternatives = p.anyOf ?? p.oneOf;
  if (alternatives) return alternatives.some((a) => fits(value, a));
  const types = Array.isArray(p.type) ? p.type : p.type ? [p.type] : [];
  if (types.length === 0) return true;
  const actual = typeOf(value);
  return types.some((t) => t === actual || (t === "number" && actual === "integer"));
}

/**
 * For an invalid-arguments error: what the tool's input schema expects, field by field, and what
 * is wrong with the arguments given (missing, of another type, unknown), so the model can fix
 * the call in one go.
 */
export function schemaHint(inputSchema: Tool["inputSchema"] | undefined, args: unknown): string {
  const properties = (inputSchema?.properties ?? {}) as Record<string, SchemaProperty>;
  const required = new Set((inputSchema?.required as string[] | undefined) ?? []);
  const given = args && typeof args === "object" ? (args as Record<string, unknown>) : {};
  const problems: string[] = [];
  for (const [name, p] of Object.entries(properties)) {
    if (!(name in given) || given[name] === undefined) {
      if (required.has(name)) problems.push(`"${name}" is missing (expected ${expectedType(p)})`);
    } else if (!fits(given[name], p)) {
      problems.push(
        `"${name}" is ${typeOf(given[name])} ${JSON.stringify(given[name])?.slice(0, 40)}, expected ${expectedType(p)}`,
      );
    }
  }
  const strict = (inputSchema as { additionalProperties?: unknown } | undefined)?.additionalProperties === false;
  for (const name of Object.keys(given))
    if (!(name in properties) && strict) problems.push(`"${name}" is not a field of this tool`);
  const fields = Object.entries(properties).map(
    ([name, p]) =>
      `${name} (${expectedType(p)}${required.has(name) ? ", required" : ""})${p.description ? `: ${p.description}` : ""}`,
  );
  const expects = fields.length > 0 ? ` The tool's input schema expects: ${fields.join("; ")}.` : "";
  return `${problems.length > 0 ? ` Wrong: ${problems.join("; ")}.` : ""}${expects}`;
}
