import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { stateProblem, type StateLocation } from "./state-errors.js";

/**
 * A checkpointer whose failures name the state, not the model: LangGraph passes a saver's
 * error through the run, where it would otherwise be reported as a failed model request.
 */
export function guardSaver<T extends BaseCheckpointSaver>(saver: T, where: StateLocation): T {
  const wrap = <K extends "getTuple" | "put" | "putWrites" | "deleteThread">(name: K) => {
    const original = (saver[name] as (...args: unknown[]) => Promise<unknown>).bind(saver);
    (saver as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      try {
        return await original(...args);
      } catch (err) {
        throw stateProblem(err, where);
      }
    };
  };
  wrap("getTuple");
  wrap("put");
  wrap("putWrites");
  wrap("deleteThread");
  const list = saver.list.bind(saver) as (...args: unknown[]) => AsyncGenerator<unknown>;
  saver.list = async function* (...args: unknown[]) {
    try {
      yield* list(...args);
    } catch (err) {
      throw stateProblem(err, where);
    }
  } as unknown as T["list"];
  return saver;
}
