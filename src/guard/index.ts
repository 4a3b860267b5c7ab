import { journalGuard, snapshotGuard, type Guard, type JournalPort, type SnapshotPort } from "./guard.js";
import { hooksGuard, type HookCallContext, type JudgeUpdate, type ToolHooks } from "./hooks.js";
import type { GuardConfig } from "./guard.js";
import { notesGuard } from "./results.js";
import { orderGuard } from "./order.js";

/**
 * The guard of one tool call, in its order, outermost first: the module that runs one call. The
 * engines run the guarded tools (the graph's ToolNode, the loop's own loop); what the guards
 * need comes in as ports from the composition root (agent/guards.ts), never imported here.
 *   snapshots  what the turn's calls may change, before and after (the snapshot port); outermost,
 *              so every call of the turn is inside the turn's one span from its start, also while
 *              it waits for an earlier call: the span's after is taken when the last call ends
 *   order      waits for the earlier calls of the turn it conflicts with (order.ts)
 *   notes      the edit note and the loop guard's note on the result (results.ts)
 *   hooks      the person's hooks before and after it (hooks.ts)
 *   journal    started before it runs, its result as it ends (the journal port)
 * and, inside, the toolset's own results guard (results.ts: refusals, secrets, size).
 */
export interface GuardPorts {
  snapshots: SnapshotPort;
  journal?: JournalPort;
  hooks?: {
    hooks: ToolHooks;
    context: Omit<HookCallContext, "threadId" | "signal" | "mode"> & { modeOf?: (config: GuardConfig) => string };
    /** Judges a call a hook's `updatedInput` changed, as an edit at the approval question is judged. */
    judge?: JudgeUpdate;
  };
}

export function guardsOf(ports: GuardPorts): Guard[] {
  return [
    snapshotGuard(ports.snapshots),
    orderGuard(),
    notesGuard,
    ...(ports.hooks ? [hooksGuard(ports.hooks.hooks, ports.hooks.context, ports.hooks.judge)] : []),
    ...(ports.journal ? [journalGuard(ports.journal)] : []),
  ];
}
