import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { configThread } from "./lock-gate.js";
import { describeStateProblem, StateError, stateLocationName, type StateLocation } from "./state-errors.js";

/** Any failure of the saver is about the saved state: named so, never as a model request. */
function saverProblem(err: unknown, where: StateLocation): Error {
  const known = describeStateProblem(err, where);
  if (known) return known;
  const message = String((err as Error)?.message ?? err).split("\n")[0];
  return new StateError(
    `Reading or saving the thread in ${stateLocationName(where)} failed: ${message}. The thread is kept up to its last saved step; run again with --verbose for details.`,
    "STATE_FAILED",
  );
}

/**
 * A checkpointer whose failures name the state, not the model: LangGraph passes a saver's
 * error through the run, where it would otherwise be reported as a failed model request.
 */
export function guardSaver<T extends BaseCheckpointSaver>(
  saver: T,
  where: StateLocation,
  /** Called with the thread of every write first; throws to refuse it (lock-gate.ts). */
  beforeWrite?: (threadId: unknown) => void,
): T {
  const wrap = <K extends "getTuple" | "put" | "putWrites" | "deleteThread">(name: K) => {
    const original = (saver[name] as (...args: unknown[]) => Promise<unknown>).bind(saver);
    (saver as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      if (name !== "getTuple") beforeWrite?.(name === "deleteThread" ? args[0] : configThread(args[0]));
      try {
        return await original(...args);
      } catch (err) {
        throw saverProblem(err, where);
      }
    };
  };
  for (const name of ["getTuple", "put", "putWrites", "deleteThread"] as const) wrap(name);
  const list = saver.list.bind(saver) as (...args: unknown[]) => AsyncGenerator<unknown>;
  saver.list = async function* (...args: unknown[]) {
    try {
      yield* list(...args);
    } catch (err) {
      throw saverProblem(err, where);
    }
  } as unknown as T["list"];
  return saver;
}
