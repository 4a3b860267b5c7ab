import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * The bytes of a stored message, without LangChain (the thread index reads them on its own):
 * a format byte, then the compact JSON (compact-messages.ts) deflated against a fixed dictionary
 * of what every message repeats (field names, usage records, tool names), which about halves it;
 * and the references a checkpoint names its messages by, as ranges.
 */

/**
 * Text every stored message shares, for deflate's preset dictionary: the most frequent last.
 * Never edit it: messages stored with it could no longer be read. A new dictionary needs a new
 * format byte (FORMAT_DEFLATED_V1) and this one kept for reading.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    '"execute_command","args":{"command":"',
    '"write_file","args":{"filePath":"',
    '"edit_file","args":{"filePath":"',
    '"apply_patch","args":{"patch":"',
    '"list_directory","args":{"directoryPath":"',
    '"search_files","args":{"pattern":"',
    '"find_files","args":{"pattern":"',
    "[Lines 1-",
    " of ",
    ", end of file.]",
    '{"type":"system","data":{"content":"',
    '{"type":"human","data":{"content":"',
    '","additional_kwargs":{}',
    '"invalid_tool_calls":[{',
    '"input_token_details":{"cache_read":0},"output_token_details":{"reasoning":0}},',
    '"response_metadata":{"prompt":0,"completion":0,"model_provider":"openai","usage":{"prompt_tokens":',
    ',"completion_tokens":',
    ',"total_tokens":',
    '},"finish_reason":"stop","system_fingerprint":"fp_',
    '},"finish_reason":"tool_calls","system_fingerprint":"fp_',
    '","model_name":"gpt-',
    '"usage_metadata":{"input_tokens":',
    ',"output_tokens":',
    ',"total_tokens":',
    ',"input_token_details":{},"output_token_details":{}},',
    '{"type":"ai","data":{"id":"chatcmpl-',
    '","content":"',
    '"tool_calls":[{"id":"call_',
    '","name":"read_file","args":{"filePath":"',
    '"},"type":"tool_call"}]}}',
    '{"type":"tool","data":{"content":"     1\t',
    "\n     2\t",
    "\n     3\t",
    '","tool_call_id":"call_',
    '","name":"read_file","status":"success","id":"',
  ].join(""),
);
/** First byte of a stored message: how the rest is encoded. */
const FORMAT_DEFLATED_V1 = 1;

export function deflateStoredMessage(json: string): Uint8Array {
  const deflated = deflateRawSync(json, { dictionary: DICTIONARY_V1 });
  const out = Buffer.allocUnsafe(deflated.length + 1);
  out[0] = FORMAT_DEFLATED_V1;
  deflated.copy(out, 1);
  return out;
}

/**
 * A stored message that cannot be read back: its bytes were changed outside mini-cursor (or by a
 * disk). `why` says what is wrong with them; the reader that knows the thread, the reference and
 * the file adds them (compact-messages.ts, state-errors.ts `describeStateProblem`).
 */
export class DamagedMessageError extends Error {
  override name = "DamagedMessageError";
  constructor(
    readonly why: string,
    readonly where: { threadId?: string; ref?: string } = {},
  ) {
    super(`a stored message${where.ref ? ` (${where.ref})` : ""} is damaged: ${why}`);
  }
}

/** The `{type, data}` object of a stored message; DamagedMessageError when its bytes are not one. */
export function inflateStoredMessage(stored: Uint8Array): { type: string; data: Record<string, unknown> } {
  // A value rewritten as text (an SQL `||` makes one) comes back as a string, whatever the column says.
  if (!(stored instanceof Uint8Array)) throw new DamagedMessageError("it is stored as text, not as bytes");
  if (stored.length === 0) throw new DamagedMessageError("it is empty");
  if (stored[0] !== FORMAT_DEFLATED_V1)
    throw new DamagedMessageError(`its first byte, the format, is ${stored[0]} and not ${FORMAT_DEFLATED_V1}`);
  let text: string;
  try {
    text = inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_V1 }).toString("utf8");
  } catch (err) {
    throw new DamagedMessageError(`its compressed bytes do not inflate: ${(err as Error).message}`);
  }
  let message: { type?: unknown; data?: unknown };
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    throw new DamagedMessageError("it inflates to text that is not JSON");
  }
  if (typeof message?.type !== "string" || typeof message.data !== "object" || message.data === null)
    throw new DamagedMessageError("it holds no message type and data");
  return message as { type: string; data: Record<string, unknown> };
}

/** `a.1,a.2,a.3,b.7` → `a.1-3,b.7`: consecutive references of one session as a range. */
export function encodeRefs(refs: readonly string[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < refs.length) {
    const [session, n] = splitRef(refs[i]!);
    let end = n;
    while (i + 1 < refs.length) {
      const [nextSession, next] = splitRef(refs[i + 1]!);
      if (nextSession !== session || next !== end + 1) break;
      end = next;
      i++;
    }
    parts.push(end === n ? `${session}.${n}` : `${session}.${n}-${end}`);
    i++;
  }
  return parts.join(",");
}

export function decodeRefs(encoded: string): string[] {
  if (encoded === "") return [];
  const refs: string[] = [];
  for (const part of encoded.split(",")) {
    const dot = part.lastIndexOf(".");
    const session = part.slice(0, dot);
    const [from, to = from] = part
      .slice(dot + 1)
      .split("-")
      .map(Number) as [number, number?];
    for (let n = from; n <= to; n++) refs.push(`${session}.${n}`);
  }
  return refs;
}

function splitRef(ref: string): [string, number] {
  const dot = ref.lastIndexOf(".");
  const n = Number(ref.slice(dot + 1));
  if (dot <= 0 || !Number.isSafeInteger(n)) throw new Error(`not a message reference: ${ref}`);
  return [ref.slice(0, dot), n];
}
