import type { StructuredToolInterface } from "@langchain/core/tools";
import type { EventSignal } from "../contracts/events.js";
import { dispatchOf, guardTool, type CallContext, type Dispatch, type Guard } from "../guard/guard.js";
import { guardsOf } from "../guard/index.js";
import { callMode, hookJudge } from "./hook-judge.js";
import { callEffects } from "../policy/effects.js";

import type { AgentRuntime } from "./runtime.js";
import { stepChanges, turnSpan, type StepChanges } from "./snapshot-step.js";
import { callJournal } from "./tool-journal-step.js";
import { conversationOf } from "../tools/read-tracker.js";

/**
 * The ports of the guard (guard/index.ts) for one runtime, from the runtime (its journal, its
 * hooks, its toolset's declarations) and from the call (its thread, its dispatch, LangGraph's
 * stream writer for the trace): the snapshots (agent/snapshot-step.ts) and the journal
 * (agent/tool-journal-step.ts) the guards write through.
 */

/** The thread a call's config names. */
const threadOf = ({ config }: CallContext) => String(config.configurable?.thread_id ?? "");

/**
 * Whose files a call's snapshots move in time travel: its thread's, unless the engine says none
 * (`configurable.timeTravel: false`: the loop, whose threads never travel and whose ids may equal
 * a graph thread's).
 */
const travellingThread = (context: CallContext) =>
  context.config.configurable?.timeTravel === false ? "" : threadOf(context);

/** What a turn's calls may change together: anything when one may, else the files they name. */
function batchChanges(batch: Dispatch["batch"]): StepChanges {
  const changes = batch.map((c) => c.changes).filter((c) => c !== undefined);
  if (changes.length === 0) return undefined;
  return changes.includes("any") ? "any" : [...new Set(changes.flatMap((c) => (c === "any" ? [] : c)))];
}

export function runtimeGuards(runtime: AgentRuntime): Guard[] {
  const journal = callJournal(runtime.journal);
  return guardsOf({
    snapshots: (context) => {
      const { request, step, turn, batch } = dispatchOf(context);
      const threadId = travellingThread(context);
      // Known by its conversation too: two sub-agents' turns may carry the same call ids.
      const span = `${runtime.workspace}\0${conversationOf(context.config) ?? ""}\0${threadId}\0${turn}`;
      return turnSpan(
        span,
        context.call,
        () => ({
          workspace: runtime.workspace,
          threadId,
          request,
          // What the turn's calls may change: a call made outside the engines, what it declares.
          changes: context.config.state?.batch
            ? batchChanges(batch)
            : stepChanges(runtime.workspace, [context.call], runtime.tools),
          tools: runtime.tools,
          notice: (message) =>
            context.config.writer?.({ kind: "event", event: { type: "notice", step, message } } satisfies EventSignal),
        }),
        context.config.signal,
      );
    },
    ...(runtime.hooks
      ? {
          hooks: {
            hooks: runtime.hooks,
            context: {
              workspace: runtime.workspace,
              timeoutMs: runtime.hookTimeoutMs,
              modeOf: (config) => callMode(runtime, config),
            },
            judge: hookJudge(runtime),
          },
        }
      : {}),
    ...(journal
      ? {
          journal: {
            started: (context) => {
              const { turn, request, edited } = dispatchOf(context);
              return journal.started(
                threadOf(context),
                { turn, request },
                {
                  ...context.call,
                  before: context.snapshot,
                  looksOnly: callEffects(context.call, runtime.tools).kind === "read",
                  ...(edited ? { editedArgs: context.call.args } : {}),
                },
              );
            },
            ended: (context, result) => journal.ended(threadOf(context), [result]),
          },
        }
      : {}),
  });
}

const guarded = new WeakMap<AgentRuntime, StructuredToolInterface[]>();

/** The runtime's tools inside its guards, made once per runtime: what the graph's ToolNode and the loop run. */
export function guardedTools(runtime: AgentRuntime): StructuredToolInterface[] {
  let tools = guarded.get(runtime);
  if (!tools) {
    const guards = runtimeGuards(runtime);
    guarded.set(runtime, (tools = runtime.tools.map((tool) => guardTool(tool, guards))));
  }
  return tools;
}
