import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { answerDanglingToolCalls, estimateTotalTokens, lastIndex, toUnits } from "./budget.js";
import { isRequest, measureContext, type SentView, SUMMARY_KEY, summaryMarker } from "./context-size.js";
import { callModelWithRetry, usageOf, type UsageCount } from "../models/invoke.js";
import { ensureOutputDir } from "../memory/state-dir.js";
import { gateText } from "../workspace/output-gate.js";
import { messageText } from "../provider/message.js";
import { CHARS_PER_TOKEN } from "../models/tokens.js";
import { withThousands } from "../thousands.js";

/**
 * Long sessions. Before each model request the conversation is measured (the provider's own
 * count of the last request when it gave one, an estimate otherwise). Near the context budget
 * the older part is summarised by the model into one note and the conversation goes on from
 * there: the latest request stays verbatim, and so do the most recent turns. The system prompt
 * (with AGENTS.md) is rebuilt for every request, so it is never part of what gets summarised.
 * Separately, big tool results the model has already seen are kept on disk with a pointer.
 */

/** Compaction starts when the request (system prompt and tool schemas included) passes this share of the budget. */
export const COMPACT_AT = 0.8;
/**
 * What a compaction aims at: summary, request and the verbatim recent turns, with the fixed part,
 * fill at most this share, so the room up to COMPACT_AT lasts many steps.
 */
export const COMPACT_TO = 0.4;
/** Never more than this share after a compaction: the recent turns give way when a summary runs long. */
export const COMPACT_LIMIT = 0.5;
/** Tokens set aside for the summary when the recent turns are chosen (the prompt asks for about 600 words). */
export const SUMMARY_ALLOWANCE_TOKENS = 1_000;
/** The summary's allowance is at most this share of the budget. */
const SUMMARY_ALLOWANCE_SHARE = 0.1;
/** Tool results longer than this (characters) leave the context once the model has read them. */
export const OFFLOAD_RESULT_CHARS = 20_000;
/** What stays of an offloaded result: its start. */
export const OFFLOAD_PREVIEW_CHARS = 2_000;
/**
 * The share of a compaction's room (half the budget less the fixed part and the summary's
 * allowance) that one tool result may take when the model first sees it. Over it, even the first
 * sight is its start and a pointer: with a small window one 40 KB result alone kept every request
 * over the trigger, and a summary ran at every step (issue 30's probe: 29 in 30).
 */
export const RESULT_ROOM_SHARE = 0.75;
/** However little room the budget leaves, a result shows at least this much (characters) when first seen. */
const MIN_RESULT_CHARS = 1_000;
/** Characters of a first-seen limit kept for the note after the start. */
const FIRST_SIGHT_NOTE_CHARS = 500;
/** Each message is cut to this in the transcript the summariser reads. */
const TRANSCRIPT_MESSAGE_CHARS = 4_000;
/** The transcript may use this share of the budget. */
const TRANSCRIPT_SHARE = 0.6;
export { SUMMARY_KEY };

export const SUMMARY_PROMPT = `You are summarising the first part of a conversation between a user and mini-cursor, a coding agent that works on the user's project with tools (read_file, edit_file, write_file, execute_command, ...). The conversation is too long for the model's context, so your summary replaces that part; the agent continues from it and cannot see the original.

Write a compact, factual summary in the language of the conversation (at most about 600 words) with these sections:
1. Requests: every request and constraint the user gave, with exact names, paths, versions and wording that matters.
2. Done: what was changed (file paths, what changed in each), commands run and their outcome, servers started (URLs, ids).
3. Findings: facts learned about the project (layout, build/test commands, conventions, the causes of errors).
4. Open: errors not yet fixed, decisions pending, and the next steps that were planned.
Do not call tools. Do not invent anything; leave out greetings and dead ends that no longer matter.`;

/** Whether a message is a compaction summary, and how many model turns it replaced. */
export function summarySteps(message: BaseMessage): number | undefined {
  const marker = summaryMarker(message);
  return marker ? Math.max(0, marker.steps ?? 0) : undefined;
}

/** Nothing worth a summary: no message, or only an earlier summary. */
const nothingToSummarise = (messages: readonly BaseMessage[]) =>
  messages.length === 0 || (messages.length === 1 && summarySteps(messages[0]!) !== undefined);

// --- big tool results ----------------------------------------------------------------------------

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100) || "result";
}

/** Saves a result once in the state folder's `output/` (read_file reads it there); returns its path. */
function saveResult(workspace: string, id: string, text: string): string | undefined {
  try {
    const file = path.join(ensureOutputDir(workspace), `result-${safeName(id)}.txt`);
    // Saved as everything mini-cursor saves: through the output gate (secrets, control characters).
    if (!existsSync(file)) writeFileSync(file, gateText(text), { flag: "wx" });
    return file;
  } catch {
    return undefined;
  }
}

/** How many characters of a tool result the context holds, by the budget and the fixed part. */
export interface OffloadLimits {
  /** A result the model has read that is longer than this goes as its start and a pointer. */
  read: number;
  /** A result the model has not seen yet that is longer than this goes as its start and a pointer already. */
  unseen: number;
}

/** Today's limits whatever the budget: only results the model has read, over OFFLOAD_RESULT_CHARS. */
export const DEFAULT_OFFLOAD_LIMITS: OffloadLimits = {
  read: OFFLOAD_RESULT_CHARS,
  unseen: Number.POSITIVE_INFINITY,
};

/**
 * The limits for a budget whose fixed part (system prompt and tool schemas, in tokens) is known:
 * a result the model first sees fits, with the fixed part and a summary, in half the budget, so a
 * compaction can always bring the request under the limit; a result it has read never takes more.
 * With the default 100k budget only results over 20,000 characters the model has read, and ones
 * over about 130,000 it has not, are affected.
 */
export function offloadLimits(budgetTokens: number, fixedTokens: number): OffloadLimits {
  const room = budgetTokens * COMPACT_LIMIT - fixedTokens - summaryAllowance(budgetTokens);
  const unseen = Math.max(MIN_RESULT_CHARS, Math.floor(room * RESULT_ROOM_SHARE * CHARS_PER_TOKEN));
  return { read: Math.min(OFFLOAD_RESULT_CHARS, unseen), unseen };
}

/** The start kept of a result the model has read: OFFLOAD_PREVIEW_CHARS, less in a small window. */
function previewChars(limits: OffloadLimits): number {
  return Math.min(OFFLOAD_PREVIEW_CHARS, Math.floor((limits.read * OFFLOAD_PREVIEW_CHARS) / OFFLOAD_RESULT_CHARS));
}

/** Lines of the saved text a read_file page may take so that the page is seen whole (line numbers added). */
function pageLines(text: string, limitChars: number): number {
  const lines = text.split("\n").length;
  return Math.max(1, Math.floor((lines * limitChars) / (2 * text.length)));
}

/**
 * The history as the model should see it: tool results over the limit that the model has
 * already read (all but those of the latest turn) are replaced by their start and a pointer to
 * the full text on disk; results of the latest turn, by the same, when they are over the limit of
 * a first sight (a small window only). The saved history is not changed, so this is the same
 * every time.
 */
export function offloadLargeResults(
  history: readonly BaseMessage[],
  workspace: string,
  limits: OffloadLimits = DEFAULT_OFFLOAD_LIMITS,
): BaseMessage[] {
  const lastAI = lastIndex(history, (m) => AIMessage.isInstance(m));
  return history.map((m, i) => {
    if (!ToolMessage.isInstance(m)) return m;
    const unseen = i > lastAI;
    const text = messageText(m);
    if (text.length <= (unseen ? limits.unseen : limits.read)) return m;
    const saved = saveResult(workspace, m.tool_call_id, text);
    if (!saved) return m;
    const paging =
      text.length > limits.unseen
        ? `page by page with read_file (offset and limit, about ${withThousands(pageLines(text, limits.unseen))} lines at a time)`
        : undefined;
    let content: string;
    if (unseen) {
      const head = text.slice(0, Math.max(0, limits.unseen - FIRST_SIGHT_NOTE_CHARS));
      content = `${head}\n[... this is the start (${withThousands(head.length)} characters) of a result of ${withThousands(text.length)} characters, more than the context window holds at once. The full text is in ${saved}; read it ${paging} if you need the rest.]`;
    } else {
      const head = text.slice(0, previewChars(limits));
      content = `${head}\n[... this result (${withThousands(text.length)} characters) was moved out of the conversation to save context. The full text is in ${saved}; read it ${paging ?? "with read_file"} if you need it again.]`;
    }
    return new ToolMessage({ tool_call_id: m.tool_call_id, name: m.name, status: m.status, id: m.id, content });
  });
}

// --- summarising ---------------------------------------------------------------------------------

type Unit = BaseMessage[];

const cut = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;

/** The older part as plain text, so the summariser needs no tools and sees every call and result. */
export function renderTranscript(messages: readonly BaseMessage[], maxChars: number): string {
  const parts = messages.map((m) => {
    const text = cut(messageText(m), TRANSCRIPT_MESSAGE_CHARS);
    if (summarySteps(m) !== undefined) return `EARLIER SUMMARY:\n${text}`;
    if (AIMessage.isInstance(m)) {
      const calls = (m.tool_calls ?? []).map((c) => `[called ${c.name} ${cut(JSON.stringify(c.args), 1000)}]`);
      return `ASSISTANT:${text ? ` ${text}` : ""}${calls.length ? `\n${calls.join("\n")}` : ""}`;
    }
    if (ToolMessage.isInstance(m)) return `TOOL RESULT (${m.name ?? "tool"}):\n${text}`;
    return `USER: ${text}`;
  });
  // Over the cap, the oldest parts go first (an earlier summary, if any, is kept at the top).
  let total = parts.reduce((n, p) => n + p.length + 2, 0);
  let start = parts[0]?.startsWith("EARLIER SUMMARY:") ? 1 : 0;
  const keptHead = start === 1 ? [parts[0]!] : [];
  while (total > maxChars && start < parts.length - 1) {
    total -= parts[start]!.length + 2;
    start++;
  }
  const dropped = start - keptHead.length;
  const note = dropped > 0 ? [`[${dropped} older messages left out]`] : [];
  return [...keptHead, ...note, ...parts.slice(start)].join("\n\n");
}

/** The summariser's answer to `prompt`. No callbacks: the summary must not stream into the trace as if it were the answer. */
async function summarise(
  model: Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>,
  prompt: string,
  signal?: AbortSignal,
) {
  const sent = [new SystemMessage(SUMMARY_PROMPT), new HumanMessage(prompt)];
  const response = await callModelWithRetry(model, sent, { signal, callbacks: [] });
  return { response, summary: messageText(response).trim(), usage: usageOf(response, sent) };
}

export interface CompactionOptions {
  systemPrompt: string;
  budgetTokens: number;
  /** The tools offered with every request: their schemas count as part of it. */
  tools?: readonly StructuredToolInterface[];
  /** What a request is sent of the history (big results read before left out): what is measured. */
  view?: SentView;
  config?: RunnableConfig;
}

export interface Compaction {
  /** The new history: summary, latest request and recent turns. */
  history: BaseMessage[];
  summary: string;
  /** Messages of the old history the summary replaced. */
  summarised: number;
  /** The request's size before and after, fixed part included, by the measure that triggers compaction. */
  tokensBefore: number;
  tokensAfter: number;
  /** Tokens of the summarising request. */
  usage: UsageCount;
  /** The summarising response (its usage_metadata and model name give the cost). */
  response: AIMessage;
}

function summaryAllowance(budgetTokens: number): number {
  return Math.min(SUMMARY_ALLOWANCE_TOKENS, Math.floor(budgetTokens * SUMMARY_ALLOWANCE_SHARE));
}

/**
 * Whether a compaction could bring the request under the trigger at all: it keeps the fixed part,
 * the request and the newest turn (whose results the model has not seen), as sent, and adds a
 * summary. When those alone come near the trigger, summarising every step would gain nothing, so
 * it is left to dropping the oldest turns (fitToBudget).
 */
export function compactionCanHelp(
  options: Omit<CompactionOptions, "config">,
  history: readonly BaseMessage[],
): boolean {
  const size = measureContext(options.systemPrompt, history, options.tools, options.budgetTokens, options.view);
  const units = toUnits(history);
  const newest = units.length > 0 ? units[units.length - 1]! : [];
  // The newest unit is kept verbatim unless it is the request itself (already counted).
  const kept = newest.length > 0 && !isRequest(newest[0]!) ? newest : [];
  const sentKept = options.view ? options.view(history).slice(history.length - kept.length) : kept;
  const keptTokens = kept.length > 0 ? estimateTotalTokens(sentKept) : 0;
  const floor =
    Math.ceil(size.scale * (summaryAllowance(options.budgetTokens) + keptTokens)) + size.fixed + size.request;
  return floor < options.budgetTokens * COMPACT_AT;
}

/**
 * The verbatim tail: the most recent units after the request, newest first, while the request
 * (fixed part, summary and request included) stays within `limitTokens` by the trigger's measure.
 * The newest unit always stays: its results have not been seen by the model yet.
 */
function tailStartWithin(units: readonly Unit[], latest: number, estimatedRoom: number): number {
  let tailStart = units.length;
  let used = 0;
  while (tailStart - 1 > latest) {
    const cost = estimateTotalTokens(units[tailStart - 1]!);
    if (used + cost > estimatedRoom && tailStart < units.length) break;
    used += cost;
    tailStart--;
  }
  return tailStart;
}

/** The compacted history: the summary stands for the units before `tailStart` (but the request). */
function assemble(units: readonly Unit[], latest: number, tailStart: number, summary: string): BaseMessage[] {
  const request = latest >= 0 ? units[latest]! : [];
  const tail = units.slice(tailStart).flat();
  // Model turns of the current run that the summary replaces: the step count goes on from them.
  const stepsReplaced = units
    .slice(latest + 1, tailStart)
    .flat()
    .filter((m) => AIMessage.isInstance(m))
    .reduce((n, m) => n + (summarySteps(m) ?? 1), 0);
  if (stepsReplaced > 0) {
    // Work on the current request was summarised: the request, then the summary as the agent's own note.
    const note = new AIMessage({
      content: `[Summary of the conversation so far, including my work on this request; older messages were compacted to save context]\n${summary}`,
      response_metadata: { [SUMMARY_KEY]: { steps: stepsReplaced, kept: tail.length } },
    });
    return [...request, note, ...tail];
  }
  const note = new HumanMessage({
    content: `[Summary of the earlier conversation, compacted to save context]\n${summary}`,
    response_metadata: { [SUMMARY_KEY]: { steps: 0, kept: request.length + tail.length } },
  });
  return [note, ...request, ...tail];
}

/**
 * Summarises everything but the latest request and the most recent turns, so that the request
 * comes to at most COMPACT_TO of the budget (COMPACT_LIMIT when the summary runs long). Undefined
 * when there is nothing worth summarising or the model could not do it (the caller then falls
 * back to dropping the oldest turns). Cancellation is passed on.
 */
export async function compactHistory(
  model: Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>,
  history: readonly BaseMessage[],
  options: CompactionOptions,
): Promise<Compaction | undefined> {
  const { budgetTokens, systemPrompt, tools, view } = options;
  const units = toUnits(answerDanglingToolCalls(history));
  const latest = lastIndex(units, (u) => isRequest(u[0]!));
  const before = measureContext(systemPrompt, history, tools, budgetTokens, view);
  // Room for the recent turns, in estimated tokens: the target less the fixed part, the request and the summary.
  const room = (limit: number, summaryTokens: number) =>
    Math.max(0, (budgetTokens * limit - before.fixed - before.request) / before.scale - summaryTokens);
  const tailStart = tailStartWithin(units, latest, room(COMPACT_TO, summaryAllowance(budgetTokens)));
  const older = units.filter((_, i) => i < tailStart && i !== latest);
  const olderMessages = older.flat();
  if (nothingToSummarise(olderMessages)) return undefined;

  const request = latest >= 0 ? units[latest]! : [];
  const maxChars = budgetTokens * CHARS_PER_TOKEN * TRANSCRIPT_SHARE;
  const transcript = renderTranscript(olderMessages, maxChars);
  const latestText = request.length
    ? `\n\n---\nThe user's latest request, kept verbatim after your summary (do not repeat it): ${cut(messageText(request[0]!), 2000)}`
    : "";
  let answer: Awaited<ReturnType<typeof summarise>>;
  try {
    answer = await summarise(model, `Conversation to summarise:\n\n${transcript}${latestText}`, options.config?.signal);
  } catch (err) {
    if (options.config?.signal?.aborted) throw err;
    return undefined;
  }
  const { response, summary, usage } = answer;
  if (!summary) return undefined;

  let kept = tailStart;
  let compacted = assemble(units, latest, kept, summary);
  let after = measureContext(systemPrompt, compacted, tools, budgetTokens, view);
  if (after.tokens >= budgetTokens * COMPACT_LIMIT) {
    // A long summary: fewer recent turns stay, so the request still ends under the limit.
    const summaryTokens = estimateTotalTokens([compacted.find((m) => summarySteps(m) !== undefined)!]);
    const shorter = Math.max(tailStart, tailStartWithin(units, latest, room(COMPACT_LIMIT, summaryTokens) - 1));
    if (shorter > tailStart) {
      kept = shorter;
      compacted = assemble(units, latest, kept, summary);
      after = measureContext(systemPrompt, compacted, tools, budgetTokens, view);
    }
  }
  return {
    history: compacted,
    summary,
    summarised: units.filter((_, i) => i < kept && i !== latest).flat().length,
    tokensBefore: before.tokens,
    tokensAfter: after.tokens,
    usage,
    response,
  };
}

// --- on request (/compact) ------------------------------------------------------------------------

/** Its history is one summary of everything before; its sizes are estimated, the fixed part left out. */
export type WholeCompaction = Compaction;

/**
 * The whole conversation summarised now, on the person's request (/compact), as Claude Code and
 * Codex do it: the summary replaces every message, and `focus` (what they typed after the
 * command) says what the summary must keep. Undefined when there is nothing to summarise (no
 * message, or only an earlier summary) or the model gave no summary; cancellation is passed on,
 * as are the model's errors (the person asked, so they are told why it did not happen).
 */
export async function summariseConversation(
  model: Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>,
  history: readonly BaseMessage[],
  options: { budgetTokens: number; focus?: string; signal?: AbortSignal },
): Promise<WholeCompaction | undefined> {
  const messages = answerDanglingToolCalls(history);
  if (nothingToSummarise(messages)) return undefined;
  const transcript = renderTranscript(messages, options.budgetTokens * CHARS_PER_TOKEN * TRANSCRIPT_SHARE);
  const focus = options.focus?.trim()
    ? `\n\n---\nThe user asked for this summary and wants it to keep in particular: ${cut(options.focus.trim(), 2000)}`
    : "";
  const { response, summary, usage } = await summarise(
    model,
    `Conversation to summarise (all of it; nothing of it stays verbatim):\n\n${transcript}${focus}`,
    options.signal,
  );
  if (!summary) return undefined;
  const note = new HumanMessage({
    content: `[Summary of the earlier conversation, compacted on the user's request (/compact)]\n${summary}`,
    response_metadata: { [SUMMARY_KEY]: { steps: 0, kept: 0 } },
  });
  return {
    history: [note],
    summary,
    summarised: messages.length,
    tokensBefore: estimateTotalTokens(messages),
    tokensAfter: estimateTotalTokens([note]),
    usage,
    response,
  };
}
