import { randomUUID } from "node:crypto";
import { isRefusedFile, MAX_STATE_FILE_BYTES, readRegularTextSync, refusalReason } from "../regular-file.js";
import path from "node:path";
import {
  BaseChatModel,
  type BaseChatModelParams,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  AIMessage,
  AIMessageChunk,
  mapStoredMessageToChatMessage,
  type BaseMessage,
  type StoredMessage,
} from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import {
  conversationKey,
  RECORDING_FORMAT,
  toolOutcomes,
  type RecordedResponse,
  type RecordingHeader,
  type ToolOutcome,
} from "./recorder.js";
import { escapeRegExp } from "../workspace/redact.js";

/**
 * Replays a recording (models/recorder.ts): a chat model that serves the recorded responses in
 * order, with no network, while the tools run for real. A response that names its conversation
 * (`sent.conversation`) answers only a request of that conversation, the next in order among
 * that conversation's: parallel sub-agents' requests arrive in any order and each still gets
 * its own. Before serving a response it checks
 * that the tool calls of the previous one turned out as they did when it was recorded (a
 * command that failed now but succeeded then, a declined call), and stops the run with one
 * clear sentence when they did not, or when the run asks for more responses than there are.
 */

export const REPLAY_MODEL_NAME = "replay";

/** A recording file that cannot be read or is not a recording. */
export class RecordingError extends Error {
  override name = "RecordingError";
}

/** The run asked for something the recording does not have. */
export class ReplayDivergenceError extends Error {
  override name = "ReplayDivergenceError";
}

export interface Recording {
  /** How messages name the file (the path as given, or relative to the working directory). */
  label: string;
  header?: RecordingHeader;
  responses: RecordedResponse[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses the text of a recording; `label` names it in errors. */
export function parseRecording(text: string, label: string): Recording {
  const recording: Recording = { label, responses: [] };
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new RecordingError(`${label} is not a recording: line ${i + 1} is not JSON.`);
    }
    if (isObject(value) && value.type === "header") {
      if (value.format !== RECORDING_FORMAT)
        throw new RecordingError(`${label} is not a recording: its header names format "${String(value.format)}".`);
      recording.header = value as unknown as RecordingHeader;
      return;
    }
    const message = isObject(value) ? value.message : undefined;
    if (
      !isObject(value) ||
      value.type !== "response" ||
      !isObject(message) ||
      message.type !== "ai" ||
      !isObject(message.data)
    ) {
      throw new RecordingError(
        `${label} is not a recording: line ${i + 1} is neither a header nor a recorded model response.`,
      );
    }
    const sent = isObject(value.sent) ? value.sent : {};
    if (sent.conversation !== undefined && typeof sent.conversation !== "string")
      throw new RecordingError(
        `${label} is not a recording: line ${i + 1} names its conversation with something not text.`,
      );
    recording.responses.push({
      type: "response",
      request: typeof value.request === "number" ? value.request : recording.responses.length + 1,
      sent: {
        messages: 0,
        sha256: "",
        last: "",
        ...sent,
        outcomes: Array.isArray(sent.outcomes) ? (sent.outcomes as ToolOutcome[]) : [],
      },
      message: message as unknown as StoredMessage,
    });
  });
  return recording;
}

/** How a path is shown: relative to the working directory when inside it. */
export function recordingLabel(file: string, cwd = process.cwd()): string {
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
}

export function loadRecording(file: string, label = recordingLabel(file)): Recording {
  let text: string;
  try {
    text = readRegularTextSync(file, { follow: true, maxBytes: MAX_STATE_FILE_BYTES });
  } catch (err) {
    if (isRefusedFile(err)) throw new RecordingError(`Cannot read the recording ${label}: ${refusalReason(err)}.`);
    const code = (err as NodeJS.ErrnoException).code;
    throw new RecordingError(
      `Cannot read the recording ${label}${code === "ENOENT" ? ": no such file" : code ? ` (${code})` : ""}.`,
    );
  }
  return parseRecording(text, label);
}

/** How each outcome is said; `exit <code>` and anything else (`ok`) are said apart. */
const OUTCOME_WORDS: Record<string, string> = {
  background: "kept running in the background",
  declined: "was declined",
  refused: "was refused (by a project rule or a hook)",
  "timed out": "timed out",
  cancelled: "was cancelled",
  "failed to start": "could not start",
  error: "failed",
};

function describeOutcome(outcome: ToolOutcome): string {
  const exit = /^exit (.+)$/.exec(outcome.outcome);
  if (exit) return `ended with exit code ${exit[1]}`;
  return Object.hasOwn(OUTCOME_WORDS, outcome.outcome) ? OUTCOME_WORDS[outcome.outcome]! : "succeeded";
}

/** One sentence saying where the run left the recording, or undefined when it did not. */
export function divergence(recording: Recording, index: number, messages: readonly BaseMessage[]): string | undefined {
  const request = index + 1;
  if (index >= recording.responses.length) {
    return `The recording ${recording.label} has no response for model request ${request} (it holds ${recording.responses.length}); the run diverged from the recording.`;
  }
  const expected = recording.responses[index]!.sent.outcomes;
  const actual = toolOutcomes(messages);
  for (let i = 0; i < Math.min(expected.length, actual.length); i++) {
    const want = expected[i]!;
    const got = actual[i]!;
    if (want.tool !== got.tool) {
      return `The run diverged from the recording ${recording.label} at model request ${request}: it answered a ${got.tool} call where the recording answered ${want.tool}.`;
    }
    if (want.outcome !== got.outcome) {
      return `The run diverged from the recording ${recording.label} at model request ${request}: \`${got.what}\` ${describeOutcome(got)}, where the recorded run ${describeOutcome(want)}.`;
    }
  }
  if (expected.length !== actual.length) {
    return `The run diverged from the recording ${recording.label} at model request ${request}: ${actual.length} tool results came back where the recording had ${expected.length}.`;
  }
  return undefined;
}

/** Local URLs announced by background processes, in the order their calls were made. */
function backgroundUrls(outcomes: Iterable<ToolOutcome>): string[] {
  return [...outcomes].filter((o) => o.outcome === "background" && o.url).map((o) => o.url!);
}

/** Every tool outcome of the conversation, in order (each AI message with the results after it). */
function conversationOutcomes(messages: readonly BaseMessage[]): ToolOutcome[] {
  const all: ToolOutcome[] = [];
  messages.forEach((m, i) => {
    if (!AIMessage.isInstance(m)) return;
    const next = messages.findIndex((n, j) => j > i && AIMessage.isInstance(n));
    all.push(...toolOutcomes(messages.slice(i, next < 0 ? messages.length : next)));
  });
  return all;
}

function origin(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Dev servers pick another port when theirs is taken, so a recorded answer naming
 * http://localhost:5173 is given the URL this run's server announced: the recorded and the
 * actual background URLs are paired from the latest backwards.
 */
export function rewriteUrls(stored: StoredMessage, recorded: string[], actual: string[]): StoredMessage {
  let json = JSON.stringify(stored);
  const pairs = Math.min(recorded.length, actual.length);
  for (let i = 1; i <= pairs; i++) {
    const from = origin(recorded[recorded.length - i]!);
    const to = origin(actual[actual.length - i]!);
    if (!from || !to || from === to) continue;
    json = json.replace(new RegExp(`${escapeRegExp(from)}(?![\\d])`, "g"), to);
  }
  return JSON.parse(json) as StoredMessage;
}

/** The recorded message as a fresh AIMessage: new message id and tool-call ids, so the reducer never merges two. */
function freshMessage(stored: StoredMessage): AIMessage {
  const original = mapStoredMessageToChatMessage(stored) as AIMessage;
  const ids = new Map<string, string>();
  const fresh = (id: string | undefined) => {
    const key = id ?? randomUUID();
    if (!ids.has(key)) ids.set(key, `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`);
    return ids.get(key)!;
  };
  return new AIMessage({
    id: `replay-${randomUUID()}`,
    content: original.content,
    response_metadata: original.response_metadata,
    tool_calls: (original.tool_calls ?? []).map((c) => ({ ...c, id: fresh(c.id), type: "tool_call" as const })),
    invalid_tool_calls: (original.invalid_tool_calls ?? []).map((c) => ({ ...c, id: fresh(c.id) })),
    ...(original.usage_metadata ? { usage_metadata: original.usage_metadata } : {}),
  });
}

/**
 * The response to model request `index + 1` (0-based `index` into the recording), checked
 * against what was sent. Throws ReplayDivergenceError when the run left the recording.
 */
export function replayResponse(recording: Recording, index: number, messages: readonly BaseMessage[]): AIMessage {
  const problem = divergence(recording, index, messages);
  if (problem) throw new ReplayDivergenceError(problem);
  const recordedUrls = backgroundUrls(recording.responses.slice(0, index + 1).flatMap((r) => r.sent.outcomes));
  const actualUrls = backgroundUrls(conversationOutcomes(messages));
  return freshMessage(rewriteUrls(recording.responses[index]!.message, recordedUrls, actualUrls));
}

function textOf(message: AIMessage): string {
  return typeof message.content === "string" ? message.content : "";
}

/** Shared by a model and its tool-bound copies (and the sub-agents'): which responses were served. */
interface ReplayCursor {
  used: Set<number>;
}

/**
 * The recording's index of the response for a request: the first not yet served whose
 * conversation is the request's, or that names none. Undefined when none is left.
 */
export function pickResponse(recording: Recording, used: ReadonlySet<number>, messages: readonly BaseMessage[]) {
  const key = conversationKey(messages);
  const index = recording.responses.findIndex(
    (r, i) => !used.has(i) && (r.sent.conversation === undefined || r.sent.conversation === key),
  );
  return index < 0 ? undefined : index;
}

/** Why no response is left for a request of conversation `key`, the run's request number `request`. */
function nothingLeft(recording: Recording, request: number, key: string, used: ReadonlySet<number>): string {
  if (used.size >= recording.responses.length)
    return `The recording ${recording.label} has no response for model request ${request} (it holds ${recording.responses.length}); the run diverged from the recording.`;
  return `The recording ${recording.label} has no response left for model request ${request}, of the conversation that starts "${key}"; the run diverged from the recording.`;
}

export interface ReplayChatModelFields extends BaseChatModelParams {
  cursor?: ReplayCursor;
}

/** A chat model that serves a recording's responses in order (see the module comment). */
export class ReplayChatModel extends BaseChatModel {
  readonly recording: Recording;
  private readonly cursor: ReplayCursor;

  constructor(recording: Recording, fields: ReplayChatModelFields = {}) {
    const { cursor, ...rest } = fields;
    super(rest);
    this.recording = recording;
    this.cursor = cursor ?? { used: new Set() };
  }

  _llmType(): string {
    return REPLAY_MODEL_NAME;
  }

  /** The tools come from the recording's responses; binding keeps the same place in it. */
  override bindTools(_tools: BindToolsInput[]): ReplayChatModel {
    return new ReplayChatModel(this.recording, { callbacks: this.callbacks, cursor: this.cursor });
  }

  /** Responses served so far. */
  get served(): number {
    return this.cursor.used.size;
  }

  /** Chosen and marked served at once, so two parallel requests never take the same response. */
  private next(messages: readonly BaseMessage[]): AIMessage {
    const { used } = this.cursor;
    const index = pickResponse(this.recording, used, messages);
    if (index === undefined)
      throw new ReplayDivergenceError(nothingLeft(this.recording, used.size + 1, conversationKey(messages), used));
    const message = replayResponse(this.recording, index, messages);
    used.add(index);
    return message;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.next(messages);
    return { generations: [{ text: textOf(message), message }] };
  }

  /**
   * Streams the recorded text word by word (so the trace shows it as it would have arrived),
   * then the tool calls as raw argument strings, which the engines parse as they parse a
   * provider's: a recorded malformed call is malformed again.
   */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = this.next(messages);
    const text = textOf(message);
    for (const piece of text ? (text.match(/\s*\S+|\s+$/g) ?? [text]) : []) {
      const chunk = new ChatGenerationChunk({
        text: piece,
        message: new AIMessageChunk({ id: message.id, content: piece }),
      });
      yield chunk;
      await runManager?.handleLLMNewToken(piece, undefined, undefined, undefined, undefined, { chunk });
    }
    const calls = [
      ...(message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: JSON.stringify(c.args) })),
      ...(message.invalid_tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: c.args ?? "" })),
    ];
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({
        id: message.id,
        content: typeof message.content === "string" ? "" : message.content,
        tool_call_chunks: calls.map((c, index) => ({ ...c, index, type: "tool_call_chunk" as const })),
        response_metadata: message.response_metadata,
        ...(message.usage_metadata ? { usage_metadata: message.usage_metadata } : {}),
      }),
    });
  }
}
