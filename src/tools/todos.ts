import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import { WRITE_TODOS_PEERS, withPeerArguments } from "./aliases.js";
import { TODO_STATUSES, type Todo, type TodoStatus } from "../contracts/tools.js";

/**
 * The todo list the model keeps (`write_todos`): its plan for a multi-step request, kept in
 * the thread's state (graph state field `todos`, the loop's thread file) and shown in the
 * trace as a checklist whenever it changes. Both engines read a successful write_todos result
 * with `todosFromResults`, so the tool itself stays a plain tool and changes no files.
 */

export const WRITE_TODOS = "write_todos";

/** Items per list: a plan longer than this is a sign the steps are too small. */
export const MAX_TODOS = 20;
/** Characters per item: one line in the trace. */
export const MAX_TODO_CHARS = 200;

export const todoSchema = z.strictObject({
  content: z
    .string()
    .trim()
    .min(1)
    .max(MAX_TODO_CHARS)
    .describe(
      `One step, as an imperative sentence ("Add the /health route to server.ts"), at most ${MAX_TODO_CHARS} characters.`,
    ),
  status: z
    .enum(TODO_STATUSES)
    .describe(
      "pending: not started; in_progress: what you are doing now (at most one item); completed: done and verified.",
    ),
});

const writeTodosObject = z.strictObject({
  todos: z
    .array(todoSchema)
    .max(MAX_TODOS)
    .describe(
      `The whole list, every time (it replaces the previous one): at most ${MAX_TODOS} items in the order you will do them, at most one in_progress. An empty list clears it.`,
    ),
});

/** Gemini CLI's and opencode's item shapes, and Codex's plan, are accepted: aliases.ts. */
export const writeTodosSchema = withPeerArguments(writeTodosObject, WRITE_TODOS_PEERS);

export type WriteTodosInput = z.infer<typeof writeTodosObject>;

/** Why a list cannot be kept, or undefined when it can (the schema checks shape and sizes). */
export function todosProblem(todos: readonly Todo[]): string | undefined {
  const active = todos.filter((t) => t.status === "in_progress").length;
  if (active > 1)
    return `Error: ${active} items are in_progress; at most one may be. Mark the others pending or completed and call write_todos again.`;
  return undefined;
}

/** Counts by status, for the tool's result and the trace's header line. */
export function todoCounts(todos: readonly Todo[]): Record<TodoStatus, number> {
  const counts: Record<TodoStatus, number> = { pending: 0, in_progress: 0, completed: 0 };
  for (const t of todos) counts[t.status]++;
  return counts;
}

/** The text the model reads back: short, since it just wrote the list itself. */
export function todosResultText(todos: readonly Todo[]): string {
  if (todos.length === 0) return "Todo list cleared.";
  const c = todoCounts(todos);
  const next = todos.find((t) => t.status === "in_progress") ?? todos.find((t) => t.status === "pending");
  const tail = next ? ` Next: ${next.content}` : " Every item is completed.";
  return `Todo list updated: ${c.completed} completed, ${c.in_progress} in progress, ${c.pending} pending.${tail}`;
}

function isTodo(value: unknown): value is Todo {
  const v = value as Partial<Todo> | null;
  return typeof v?.content === "string" && TODO_STATUSES.includes(v.status as TodoStatus);
}

/**
 * The list a turn's results leave, or undefined when no write_todos call succeeded in them.
 * The tool puts the accepted list in its result's artifact; when several calls ran in one turn
 * the last one wins, as it would if they had run one after the other.
 */
export function todosFromResults(results: readonly BaseMessage[]): Todo[] | undefined {
  let found: Todo[] | undefined;
  for (const m of results) {
    if (!ToolMessage.isInstance(m) || m.name !== WRITE_TODOS || m.status === "error") continue;
    const todos = (m.artifact as { todos?: unknown } | undefined)?.todos;
    if (Array.isArray(todos) && todos.every(isTodo))
      found = todos.map((t) => ({ content: t.content, status: t.status }));
  }
  return found;
}
