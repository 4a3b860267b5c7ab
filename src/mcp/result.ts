import { HEAD_CHARS, MAX_OUTPUT_CHARS, TAIL_CHARS } from "../workspace/output-store.js";
import { withThousands } from "../thousands.js";

/**
 * What the model reads of an MCP tool's result: text, bounded like a command's output (head and
 * tail with a notice between). Images, audio and binary resources are not sent on (the
 * chat-completions tool message carries text only, and base64 would fill the context): a note
 * says what was there. The adapter's content blocks are the input (mcp-adapters `_callTool`).
 */

interface Block {
  type?: string;
  text?: string;
  source_type?: string;
  mime_type?: string;
  data?: string;
  url?: string;
  image_url?: { url?: string } | string;
}

const n = (x: number) => withThousands(x);

/** Bytes of a base64 payload (or a data: URL's). */
function base64Bytes(data: string | undefined): number {
  if (!data) return 0;
  const body = data.startsWith("data:") ? data.slice(data.indexOf(",") + 1) : data;
  const padding = body.endsWith("==") ? 2 : body.endsWith("=") ? 1 : 0;
  return Math.floor((body.length * 3) / 4) - padding;
}

function imageNote(block: Block): string {
  const url = typeof block.image_url === "string" ? block.image_url : block.image_url?.url;
  const mime = block.mime_type ?? /^data:([^;,]+)/.exec(url ?? "")?.[1] ?? "unknown type";
  return `[image (${mime}, ${n(base64Bytes(block.data ?? url))} bytes) returned by the tool; images are not shown to you]`;
}

function blockText(block: Block): string {
  switch (block.type) {
    case "text":
      return block.text ?? "";
    case "image":
    case "image_url":
      return imageNote(block);
    case "audio":
      return `[audio (${block.mime_type ?? "unknown type"}, ${n(base64Bytes(block.data))} bytes) returned by the tool; audio is not passed on]`;
    case "file":
      if (block.source_type === "text") return block.text ?? "";
      if (block.source_type === "url") return `[resource link: ${block.url ?? "(no URL)"}]`;
      return `[file (${block.mime_type ?? "unknown type"}, ${n(base64Bytes(block.data))} bytes) returned by the tool; binary content is not passed on]`;
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

/** The text of an adapter result (a string, a block, or an array of blocks), bounded. */
export function mcpResultText(content: unknown): string {
  let text: string;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content))
    text = content.map((b) => (typeof b === "string" ? b : blockText(b as Block))).join("\n");
  else if (content && typeof content === "object") text = blockText(content as Block);
  else text = String(content ?? "");
  return boundText(text === "" ? "(the tool returned no content)" : text);
}
