import { z } from "zod";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { ToolFailure } from "../guard/failure.js";

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
- run_in_background and model are accepted and not used: every sub-agent runs in the foreground on its type's model.
- A sub-agent cannot start sub-agents. It has its own step limit; its tools never exceed yours and its calls ask the person as yours do.
- Only the report comes back: read it, then act or answer. Verify what matters before you rely on it.`;
}

/** Longest `model` name a call may carry (it is not used: see taskCallNotes). */
export const MAX_TASK_MODEL_CHARS = 100;

/**
 * Claude Code's built-in agent names, as ours (normalised: lowercase, no spaces, - or _), so a
 * model trained on them reaches ours: its read-only Explore and Plan are our explore (which
 * plans nothing, but investigates without changing anything, as both do), general-purpose our general.
 */
const CLAUDE_AGENT_NAMES: Readonly<Record<string, string>> = {
  generalpurpose: "general",
  plan: "explore",
};

/** A name as matched: case, spaces, - and _ do not count (`General Purpose` is `general-purpose`). */
const normalised = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, "");

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
    .describe(
      "Which sub-agent to start: one of the names listed in this tool's description (case, spaces, - and _ do not matter; Claude Code's general-purpose, Explore and Plan are accepted).",
    ),
  model: z
    .string()
    .max(MAX_TASK_MODEL_CHARS)
    .optional()
    .describe(
      "Not used here: accepted for compatibility. The sub-agent runs on its type's model (its agent file's `model`), else yours. Leave it out.",
    ),
  run_in_background: z
    .boolean()
    .optional()
    .describe(
      "Not used here: accepted for compatibility. The sub-agent always runs in the foreground and this call returns its report; to run several at once, make several task calls in one turn.",
    ),
});

export type TaskInput = z.output<typeof taskSchema>;

/** The `task` tool for these agent types. Running it outside an engine says so. */
export function taskTool(types: readonly SubagentType[]): StructuredToolInterface {
  return declared(
    tool(
      async () => {
        throw new ToolFailure("task calls are run by the agent's engine, not as a plain tool.");
      },
      { name: TASK_TOOL, description: taskToolDescription(types), schema: taskSchema },
    ),
    // The call itself changes nothing: the sub-agent's own calls are judged (and asked about) in
    // its own approve step, in the parent's mode. So its turn needs no question, and it runs in
    // plan mode, where the sub-agent is in plan mode too.
    { kind: "read", paths: {} },
  );
}

/**
 * The agent type a call names, or the result text saying which exist. The name as written wins;
 * else case, spaces, - and _ do not count; else Claude Code's built-in name maps to ours
 * (CLAUDE_AGENT_NAMES). Two types that differ only in those is an error naming both.
 */
export function findSubagentType(
  types: readonly SubagentType[],
  name: unknown,
): { type: SubagentType } | { error: string } {
  const exact = types.find((t) => t.name === name);
  if (exact) return { type: exact };
  const available = `Available: ${types.map((t) => t.name).join(", ")}.`;
  if (typeof name === "string") {
    const wanted = normalised(name);
    const alike = types.filter((t) => normalised(t.name) === wanted);
    if (alike.length === 1) return { type: alike[0]! };
    if (alike.length > 1)
      return {
        error: `Error: subagent_type ${JSON.stringify(name)} could be ${alike.map((t) => t.name).join(" or ")}: give the name exactly. ${available}`,
      };
    const mapped = CLAUDE_AGENT_NAMES[wanted];
    const ours = mapped && types.find((t) => t.name === mapped);
    if (ours) return { type: ours };
  }
  return {
    error: `Error: there is no subagent_type ${JSON.stringify(name)}. ${available} Call task again with one of them.`,
  };
}

/**
 * What a task call's result should say about the arguments it gave that do not apply here
 * (`model`, `run_in_background`): one line, or undefined. For the engines to put before the report.
 */
export function taskCallNotes(input: Pick<TaskInput, "model" | "run_in_background">): string | undefined {
  const notes = [
    ...(input.run_in_background
      ? ["run_in_background is not supported: the sub-agent ran in the foreground and this is its finished report"]
      : []),
    ...(input.model ? [`model ${JSON.stringify(input.model)} was ignored: the sub-agent ran on its type's model`] : []),
  ];
  return notes.length > 0 ? `[${notes.join("; ")}.]` : undefined;
}
