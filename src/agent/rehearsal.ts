import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { uuid5, uuid6 } from "@langchain/langgraph-checkpoint";
import { decodeMessage, encodeMessage } from "../memory/compact-messages.js";
import { toolJournalIn } from "../memory/tool-journal.js";
import { createChatModel, type ModelSettings } from "../models/model.js";
import { createTools } from "../tools/index.js";
import { takeModelTurn } from "./model-turn.js";

/**
 * The first step's rehearsal. A process's first tool step runs code that is compiled (the
 * bundle's code cache) but has never run: reading a streamed response through the provider layer
 * and LangChain's chunks, the journal's first durable write, the first read_file, the next
 * request's tool messages. That costs the first step tens of ms over the next (BENCHMARKS.md).
 * While the first request waits for the model (app/warm-up.ts), the same code runs once on
 * throwaway inputs: a canned stream answered from memory through the session's own kind of model
 * (no request leaves the process), read_file and the journal in a private temporary folder, the
 * stored form of the step's messages (encoded and decoded in memory) and the ids of checkpoints
 * and tasks. The workspace, the thread, its checkpointer and the session's journal are never
 * given to it.
 */

/** Name of the temporary folder's one file, the one the rehearsal's read_file reads. */
const REHEARSAL_FILE = "rehearsal.txt";
const REHEARSAL_THREAD = "rehearsal";
const CALL_ID = "call_rehearsal";

/** What the rehearsal's model answers: a tool call streamed in pieces, with usage, as OpenAI streams it. */
function cannedEvents(model: string): string[] {
  const base = { id: "chatcmpl-rehearsal", object: "chat.completion.chunk", created: 0, model };
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }] });
  const args = JSON.stringify({ filePath: REHEARSAL_FILE });
  const half = Math.floor(args.length / 2);
  return [
    delta({ role: "assistant", content: "" }),
    delta({ content: "Reading." }),
    delta({
      tool_calls: [{ index: 0, id: CALL_ID, type: "function", function: { name: "read_file", arguments: "" } }],
    }),
    delta({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }),
    delta({}, "tool_calls"),
    JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
    "[DONE]",
  ];
}

/** A fetch that answers every request with the canned stream, one event per read, from memory. */
function cannedWire(model: string): typeof globalThis.fetch {
  return async (_input, init) => {
    // The request is built in full, as for a real provider, and then dropped.
    if (typeof init?.body === "string") JSON.parse(init.body);
    const events = cannedEvents(model);
    const encoder = new TextEncoder();
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const event = events[next++];
        if (event === undefined) controller.close();
        else controller.enqueue(encoder.encode(`data: ${event}\n\n`));
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

export interface RehearsalInput {
  /** The session's model settings: the rehearsal's model is made as the session's is, its wire answered from memory. */
  modelSettings: ModelSettings;
  /** The session's tools, offered to the rehearsal's model as to the real one (their schemas are sent). */
  tools: readonly StructuredToolInterface[];
  systemPrompt: string;
  contextTokens: number;
  /** Where the temporary folder is made (default: the system's). */
  tempRoot?: string;
  /**
   * Says when the real answer has come in: the rehearsal then stops before its next part (a
   * slow machine's rehearsal must not take the real step's time).
   */
  stop?: () => boolean;
  /** Replaces the canned wire (tests: a rehearsal that fails). */
  wire?: typeof globalThis.fetch;
}

/** Whether a session's model is one the rehearsal can stand in for (an HTTP provider, nothing recorded or replayed). */
export function canRehearse(settings: ModelSettings): boolean {
  return settings.provider !== "offline" && !settings.replay && !settings.record;
}

/**
 * Runs the first step's code paths once on throwaway inputs, stopping between parts once
 * `stop()` says the real answer came. Throws what failed (the caller
 * ignores it: the real step runs the same code and reports its own errors); the temporary folder
 * is removed in every case, at exit at the latest.
 */
export async function rehearseFirstStep(input: RehearsalInput): Promise<void> {
  const dir = mkdtempSync(path.join(input.tempRoot ?? os.tmpdir(), "mini-cursor-rehearsal-"));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeDir);
  try {
    writeFileSync(path.join(dir, REHEARSAL_FILE), "rehearsal\n", { mode: 0o600 });
    const model = createChatModel(
      { ...input.modelSettings, record: undefined, replay: undefined, maxRetries: 0 },
      input.wire ?? cannedWire(input.modelSettings.model),
    );
    const bound = model.bindTools?.([...input.tools]) ?? model;
    // A conversation one step in, so the request carries an assistant tool call and its result as the second one does.
    const call = { id: CALL_ID, name: "read_file", args: { filePath: REHEARSAL_FILE } };
    const history = [
      new HumanMessage("Rehearsal."),
      new AIMessage({ content: "", tool_calls: [call] }),
      new ToolMessage({ tool_call_id: CALL_ID, name: "read_file", status: "success", content: "rehearsal" }),
    ];
    const { message } = await takeModelTurn(bound, {
      systemPrompt: input.systemPrompt,
      history,
      contextTokens: input.contextTokens,
      tools: input.tools as StructuredToolInterface[],
    });
    const stopped = () => input.stop?.() === true;
    if (stopped()) return;
    const journal = toolJournalIn(() => dir);
    const calls = message.tool_calls ?? [];
    await journal.start(
      REHEARSAL_THREAD,
      calls.map((c) => ({ callId: c.id ?? "", name: c.name, request: "", startedAt: new Date().toISOString() })),
    );
    if (stopped()) return;
    const tools = createTools({ workspace: dir, env: {}, redact: [] });
    const results = (await Promise.all(
      calls.map((c) => tools.read_file.invoke({ ...c, name: "read_file", type: "tool_call" }, { configurable: {} })),
    )) as ToolMessage[];
    await journal.end(
      REHEARSAL_THREAD,
      new Map(results.map((r) => [r.tool_call_id, { content: String(r.content), status: "success" as const }])),
    );
    await journal.clear(REHEARSAL_THREAD);
    if (stopped()) return;
    // What the checkpointer does with the step (memory/compact-messages.ts), without storing it.
    for (const m of [...history, message, ...results]) decodeMessage(encodeMessage(m));
    uuid5(uuid6(-1), uuid6(-1));
  } finally {
    process.removeListener("exit", removeDir);
    removeDir();
  }
}
