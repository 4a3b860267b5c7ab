import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import {
  AIMessage,
  AIMessageChunk,
  ToolMessage,
  mapChatMessagesToStoredMessages,
  type BaseMessage,
  type StoredMessage,
} from "@langchain/core/messages";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import { isIncompleteResponse, strictToolCalls } from "./invoke.js";
import { messageText } from "../provider/message.js";

/**
 * Recordings: every model response of a run, one JSON line each, with a digest of what was
 * sent. `--record <file>` writes one; `--replay <file>` (models/replay.ts) plays it back.
 *
 *   {"type":"header","format":"mini-cursor-recording","version":1,"model":"gpt-4o","recordedAt":"…"}
 *   {"type":"response","request":1,"sent":{…digest…},"message":{"type":"ai","data":{…}}}
 *
 * `message` is LangChain's stored form (mapChatMessagesToStoredMessages). `sent` says what the
 * response answered: how many messages, a hash of them, the last one in short, and how the tool
 * calls of the previous response turned out (`outcomes`), which is what a replay checks to
 * notice that a run went differently from the recorded one.
 */

export const RECORDING_FORMAT = "mini-cursor-recording";
export const RECORDING_VERSION = 1;
/** Characters of the last message kept in a digest. */
const LAST_MESSAGE_CHARS = 80;
/** Characters of a conversation's first user message kept in a digest, to tell conversations apart. */
export const CONVERSATION_CHARS = 120;

export interface RecordingHeader {
  type: "header";
  format: typeof RECORDING_FORMAT;
  version: number;
  /** The model that answered (for a hand-written recording, what it stands in for). */
  model: string;
  recordedAt: string;
  /** Free text: what the recording is of. */
  note?: string;
}

/** How one tool call of the previous response turned out, as far as a replay cares. */
export interface ToolOutcome {
  tool: string;
  /** What was called, in short: the command, or the path. */
  what: string;
  /**
   * `exit 0`, `exit 1`, `background`, `timed out`, `cancelled`, `failed to start` (commands);
   * `declined`, `refused` (approvals and rules); `error` or `ok` (other tools).
   */
  outcome: string;
  /** The local URL a background process announced. */
  url?: string;
}

export interface RequestDigest {
  /** Messages sent, system prompt included. */
  messages: number;
  /** First 16 hex digits of the SHA-256 of the stored messages. */
  sha256: string;
  /** The last message, in short ("human: …", "tool execute_command: …"). */
  last: string;
  outcomes: ToolOutcome[];
  /**
   * The conversation's first user message, in short (conversationKey): the request's for the
   * parent, the prompt for a sub-agent. Parallel sub-agents ask in varying order, so a replay
   * answers a request with the next response of its own conversation. Absent (older and
   * hand-written recordings): the response answers whichever request comes next.
   */
  conversation?: string;
}

export interface RecordedResponse {
  type: "response";
  /** 1-based number of the model request in the run. */
  request: number;
  sent: RequestDigest;
  message: StoredMessage;
}

function short(text: string, max = LAST_MESSAGE_CHARS): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** What a tool call did, in a few words: the command, the path. */
export function describeCall(call: { name: string; args: Record<string, unknown> }): string {
  const args = call.args ?? {};
  const main = args.command ?? args.filePath ?? args.directoryPath ?? args.pattern ?? args.id;
  return typeof main === "string" ? short(main, 120) : call.name;
}

/** The outcome of one tool result, read from its text the way the tools write it. */
export function outcomeOf(tool: string, result: ToolMessage): Pick<ToolOutcome, "outcome" | "url"> {
  const text = messageText(result);
  const first = text.split("\n", 1)[0] ?? "";
  if (first.startsWith("Refused:")) return { outcome: "refused" };
  if (
    (result.artifact as { notRun?: unknown } | undefined)?.notRun === true ||
    / call was not run, because /.test(first)
  )
    return { outcome: "declined" };
  if (tool === "execute_command") {
    const exit = /^Exit code: (-?\d+|null)/.exec(first);
    if (exit) return { outcome: `exit ${exit[1]}` };
    const background = /^Running in the background as bg-\d+ \(pid \d+\)(?: at (\S+?))?\.?$/.exec(first);
    if (background) return background[1] ? { outcome: "background", url: background[1] } : { outcome: "background" };
    if (first.startsWith("Timed out")) return { outcome: "timed out" };
    if (first.startsWith("Cancelled")) return { outcome: "cancelled" };
    if (first.startsWith("Could not start")) return { outcome: "failed to start" };
  }
  return { outcome: result.status === "error" ? "error" : "ok" };
}

/** How the tool calls of the last AI message turned out, in the order they were made. */
export function toolOutcomes(messages: readonly BaseMessage[]): ToolOutcome[] {
  let lastAi = -1;
  messages.forEach((m, i) => {
    if (AIMessage.isInstance(m) || AIMessageChunk.isInstance(m)) lastAi = i;
  });
  if (lastAi < 0) return [];
  const ai = messages[lastAi] as AIMessage;
  const results = messages.slice(lastAi + 1).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  const outcomes: ToolOutcome[] = [];
  for (const call of ai.tool_calls ?? []) {
    const result = results.find((r) => r.tool_call_id === call.id);
    if (!result) continue;
    outcomes.push({ tool: call.name, what: describeCall(call), ...outcomeOf(call.name, result) });
  }
  return outcomes;
}

/** Which conversation a request belongs to: its first user message, whitespace collapsed, cut at CONVERSATION_CHARS. */
export function conversationKey(messages: readonly BaseMessage[]): string {
  const first = messages.find((m) => m.getType() === "human");
  return first ? short(messageText(first), CONVERSATION_CHARS) : "";
}

export function digestRequest(messages: readonly BaseMessage[]): RequestDigest {
  const stored = mapChatMessagesToStoredMessages([...messages]);
  const sha256 = createHash("sha256").update(JSON.stringify(stored)).digest("hex").slice(0, 16);
  const last = messages.at(-1);
  const lastText = last
    ? `${last.getType()}${ToolMessage.isInstance(last) && last.name ? ` ${last.name}` : ""}: ${short(messageText(last))}`
    : "";
  return {
    messages: messages.length,
    sha256,
    last: lastText,
    outcomes: toolOutcomes(messages),
    conversation: conversationKey(messages),
  };
}

/** The response as a plain AIMessage with only what a replay needs. */
export function responseToRecord(message: BaseMessage): AIMessage {
  const meta = (message.response_metadata ?? {}) as Record<string, unknown>;
  const response_metadata: Record<string, unknown> = {};
  if (typeof meta.finish_reason === "string") response_metadata.finish_reason = meta.finish_reason;
  if (typeof meta.model_name === "string") response_metadata.model_name = meta.model_name;
  const calls = AIMessageChunk.isInstance(message)
    ? strictToolCalls(message) // as the engines parse it, so a cut-off call is recorded as invalid
    : {
        tool_calls: (message as AIMessage).tool_calls ?? [],
        invalid_tool_calls: (message as AIMessage).invalid_tool_calls ?? [],
      };
  const usage = (message as AIMessage).usage_metadata;
  return new AIMessage({
    content: message.content,
    response_metadata,
    ...calls,
    ...(usage ? { usage_metadata: usage } : {}),
  });
}

export interface RecorderOptions {
  /** Model name for the header. */
  model: string;
  note?: string;
  /** Clock for the header (tests). */
  now?: () => Date;
}

/**
 * Observes a chat model through LangChain callbacks and appends every response it completes to
 * `file` (truncated and given a header when the recorder is created). Failed requests, aborted
 * ones and streams the provider cut short are not responses and are not recorded, so a retried
 * request appears once.
 */
export class ResponseRecorder extends BaseCallbackHandler {
  name = "mini-cursor-recorder";
  /** Written before the engine sees the response, so the file is complete at every step. */
  override awaitHandlers = true;
  readonly file: string;
  private readonly pending = new Map<string, RequestDigest>();
  private count = 0;

  constructor(file: string, options: RecorderOptions) {
    super();
    this.file = file;
    mkdirSync(path.dirname(file), { recursive: true });
    const header: RecordingHeader = {
      type: "header",
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      model: options.model,
      recordedAt: (options.now?.() ?? new Date()).toISOString(),
      ...(options.note ? { note: options.note } : {}),
    };
    writeFileSync(file, `${JSON.stringify(header)}\n`);
  }

  override handleChatModelStart(_llm: Serialized, messages: BaseMessage[][], runId: string): void {
    this.pending.set(runId, digestRequest(messages[0] ?? []));
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const sent = this.pending.get(runId);
    this.pending.delete(runId);
    const generation = output.generations[0]?.[0] as { message?: BaseMessage } | undefined;
    // A stream the provider ended early (no finish_reason) is retried by the engine: not a response of the run.
    if (!sent || !generation?.message || isIncompleteResponse(generation.message)) return;
    const line: RecordedResponse = {
      type: "response",
      request: ++this.count,
      sent,
      message: mapChatMessagesToStoredMessages([responseToRecord(generation.message)])[0]!,
    };
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }

  override handleLLMError(_err: unknown, runId: string): void {
    this.pending.delete(runId);
  }
}

/**
 * Adds the recorder to the model's own callbacks, which LangChain calls for every request
 * (tool-calling turns and compaction summaries alike). Only for models whose `bindTools` keeps
 * the instance's callbacks (the offline, replay and scripted models); ChatOpenAI rebuilds
 * itself from its constructor fields, so createChatModel gives it the recorder there.
 */
export function recordModel<M extends BaseChatModel>(model: M, recorder: ResponseRecorder): M {
  const existing = model.callbacks;
  if (existing === undefined) model.callbacks = [recorder];
  else if (Array.isArray(existing)) model.callbacks = [...existing, recorder];
  else existing.addHandler(recorder, false);
  return model;
}
