import { z } from "zod";
import { createTool, defineTool, type AgentTool } from "./define.js";
import { ToolFailure } from "./errors.js";

/**
 * The `task` tool: the model hands a piece of work to a sub-agent with a fresh context, which
 * returns one report. The arguments are named as in Claude Code's Task tool (`description`,
 * `prompt`, `subagent_type`), the shape models are trained on. The engines run the calls
 * themselves (graph/subagent.ts as a subgraph, loop/subagents.ts as a nested loop), so this
 * definition is the schema, the description and the declaration only.
 */

export const TASK_TOOL = "task";

/** Longest description of one agent type shown to the model in the tool's description. */
const MAX_TYPE_DESCRIPTION_CHARS = 300;
/** Longest `prompt` a call may carry: a brief, not a file. */
export const MAX_TASK_PROMPT_CHARS = 20_000;
/** Longest `description` (the label on the trace). */
export const MAX_TASK_LABEL_CHARS = 80;

/** Where an agent type comes from: built in, the person's config folder, or the repository (trusted). */
export type SubagentSource = "built-in" | "user" | "project";

/** One kind of sub-agent the `task` tool can start. */
export interface SubagentType {
  name: string;
  /** For the model: when to use it. */
  description: string;
  /**
   * The tools it may use, by name: the parent's tools narrowed to these (never more, and never
   * `task`); "read-only" for the parent's tools of kind read; undefined for all the parent's.
   */
  tools?: readonly string[] | "read-only";
  /** Tools taken away from those (Claude Code's `disallowedTools`). */
  disallowedTools?: readonly string[];
  /** A model name for it (undefined or "inherit": the parent's model). */
  model?: string;
  /** What it is told beside the request (the Markdown body of its file). */
  instructions: string;
  source: SubagentSource;
  /** The file it was read from (none for the built-in ones). */
  file?: string;
}

/** The built-in types: explore (read-only, concise report) and general (the parent's tools and mode). */
export const BUILT_IN_SUBAGENTS: readonly SubagentType[] = [
  {
    name: "explore",
    description:
      "Read-only investigation of the codebase: finds files, reads and searches them, and returns a concise report with file paths and line numbers. It cannot change files or run commands. Use it to answer a question about a large codebase without filling your own context.",
    tools: "read-only",
    instructions:
      "You are an exploration sub-agent. Investigate with the read-only tools you have, then answer with a concise report: the facts asked for, with file paths (and line numbers where useful), at most about 300 words. Do not propose changes unless asked. Your last message is the whole report the caller gets.",
    source: "built-in",
  },
  {
    name: "general",
    description:
      "A general sub-agent with your tools and your approval mode (never looser): for a self-contained side task, such as a change in a few files, that you want done without its details in your context. Its file changes and commands ask the person exactly as yours do.",
    instructions:
      "You are a sub-agent doing one self-contained task for the main agent. Do the task with your tools, then end with a short report: what you did, which files you changed, and anything left undone. Your last message is the whole report the caller gets.",
    source: "built-in",
  },
];

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The tool's description: what it does, its limits, and each available type with its description. */
export function taskToolDescription(types: readonly SubagentType[]): string {
  const list = types.map((t) => `- ${t.name}: ${clip(t.description, MAX_TYPE_DESCRIPTION_CHARS)}`).join("\n");
  return `Start a sub-agent with a fresh context on one self-contained task; it works on its own and returns one report, which is this call's result.
Available subagent_type values:
${list}
- The sub-agent sees none of this conversation: put everything it needs in \`prompt\` (the goal, the files or names you know, what its report must contain). At most ${MAX_TASK_PROMPT_CHARS} characters.
- Several task calls in one turn run in parallel; use that for independent investigations.
- A sub-agent cannot start sub-agents. It has its own step limit; its tools never exceed yours and its calls ask the person as yours do.
- Only the report comes back: read it, then act or answer. Verify what matters before you rely on it.`;
}

export const taskSchema = z.strictObject({
  description: z
    .string()
    .min(1)
    .max(MAX_TASK_LABEL_CHARS)
    .describe(
      `A short label for the task (3 to 7 words), shown on the trace. At most ${MAX_TASK_LABEL_CHARS} characters.`,
    ),
  prompt: z
    .string()
    .min(1)
    .max(MAX_TASK_PROMPT_CHARS)
    .describe(
      `The complete brief for the sub-agent, which sees nothing of this conversation. At most ${MAX_TASK_PROMPT_CHARS} characters.`,
    ),
  subagent_type: z
    .string()
    .min(1)
    .describe("Which sub-agent to start: one of the names listed in this tool's description."),
});

export type TaskInput = z.output<typeof taskSchema>;

/** The `task` tool for these agent types. Running it outside an engine says so. */
export function taskTool(types: readonly SubagentType[]): AgentTool {
  return createTool(
    defineTool({
      name: TASK_TOOL,
      description: taskToolDescription(types),
      schema: taskSchema,
      // The call itself changes nothing: the sub-agent's own calls are judged (and asked about)
      // in its own approve step, in the parent's mode. So its turn needs no question, and it runs
      // in plan mode, where the sub-agent is in plan mode too.
      kind: "read",
      paths: () => [],
      run: async () => {
        throw new ToolFailure("task calls are run by the agent's engine, not as a plain tool.");
      },
    }),
  );
}

/** The agent type a call names, or the result text saying which exist. */
export function findSubagentType(
  types: readonly SubagentType[],
  name: unknown,
): { type: SubagentType } | { error: string } {
  const type = types.find((t) => t.name === name);
  if (type) return { type };
  return {
    error: `Error: there is no subagent_type ${JSON.stringify(name)}. Available: ${types.map((t) => t.name).join(", ")}. Call task again with one of them.`,
  };
}
