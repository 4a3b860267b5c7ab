import { MAX_TODOS, todosProblem, todosResultText, WRITE_TODOS, writeTodosSchema } from "./todos.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { ToolFailure } from "../guard/failure.js";

const DESCRIPTION = `Keep a todo list for the current request: your plan, which the user sees as a checklist.
Use it for work of three or more distinct steps (a feature across several files, a bug hunt, a refactor, a list of things the user asked for), and in plan mode to set out the plan. Do not use it for a single simple step, a question, or a one-line change: just do it.
- Send the whole list every time; it replaces the previous one. At most ${MAX_TODOS} items.
- Mark an item in_progress before you start it (at most one at a time) and completed as soon as it is done and verified; do not batch completions.
- Add items you discover, remove ones that no longer apply. Never mark an item completed when its tests fail or the work is partial.
It changes no files and needs no approval.`;

/**
 * write_todos: validates the list and puts it in its result's artifact, which the results guard
 * (guard/results.ts) makes the thread's list (the graph's `todos` state, the loop's thread).
 */
export function writeTodosTool() {
  return declared(
    tool(
      async (input) => {
        const problem = todosProblem(input.todos);
        if (problem) throw new ToolFailure(problem);
        return [todosResultText(input.todos), { todos: input.todos }];
      },
      { name: WRITE_TODOS, description: DESCRIPTION, schema: writeTodosSchema, responseFormat: "content_and_artifact" },
    ),
    // Changes only the thread's own list, nothing in the workspace: it runs in plan mode too.
    { kind: "read", paths: {} },
  );
}
