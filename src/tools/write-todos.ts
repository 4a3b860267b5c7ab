import { MAX_TODOS, todosProblem, todosResultText, WRITE_TODOS, writeTodosSchema } from "./todos.js";
import { defineTool } from "./define.js";
import { ToolFailure } from "./errors.js";

const DESCRIPTION = `Keep a todo list for the current request: your plan, which the user sees as a checklist.
Use it for work of three or more distinct steps (a feature across several files, a bug hunt, a refactor, a list of things the user asked for), and in plan mode to set out the plan. Do not use it for a single simple step, a question, or a one-line change: just do it.
- Send the whole list every time; it replaces the previous one. At most ${MAX_TODOS} items.
- Mark an item in_progress before you start it (at most one at a time) and completed as soon as it is done and verified; do not batch completions.
- Add items you discover, remove ones that no longer apply. Never mark an item completed when its tests fail or the work is partial.
It changes no files and needs no approval.`;

/**
 * write_todos, defined once (tools/define.ts): validates the list and hands it to the engines in
 * its result's artifact; each engine's tools step puts it in the thread's state (todosFromResults).
 */
export function writeTodosTool() {
  return defineTool({
    name: WRITE_TODOS,
    description: DESCRIPTION,
    schema: writeTodosSchema,
    // Changes only the thread's own list, nothing in the workspace: it runs in plan mode too.
    kind: "read",
    paths: () => [],
    run: async (input) => {
      const problem = todosProblem(input.todos);
      if (problem) throw new ToolFailure(problem);
      return { content: todosResultText(input.todos), artifact: { todos: input.todos } };
    },
  });
}
