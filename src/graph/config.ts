import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { APPROVAL_MODES } from "../contracts/modes.js";

/**
 * What can change from one run to the next: the fields of LangGraph Studio's assistant panel
 * (and of `config.configurable` over the LangGraph API). A field left unset falls back to the
 * environment exactly as in the CLI, so the provider (OPENAI_BASE_URL, OPENAI_API_KEY) always
 * comes from there. A zod schema, like the state (state.ts), so the dev server reads it at run
 * time instead of type-checking the sources. Values are validated by the settings, not here.
 */
export const AgentConfiguration = z.object({
  model: z.string().optional().describe("Model name the provider serves. Default: MINI_CURSOR_MODEL, else gpt-5-mini."),
  workspace: z
    .string()
    .optional()
    .describe("Root folder for every tool. Default: MINI_CURSOR_WORKSPACE, else the directory the server started in."),
  approval: z
    .enum(APPROVAL_MODES)
    .optional()
    .describe(
      "Which tool calls pause for approval: suggest, auto-edit, full-auto or plan (read-only tools only). Default: MINI_CURSOR_APPROVAL, else auto-edit.",
    ),
  maxSteps: z
    .number()
    .optional()
    .describe("Model turns per request before the run stops. Default: MINI_CURSOR_MAX_STEPS, else 30."),
});

/** The configuration of one run; every field optional. */
export type AgentConfigurationValues = z.infer<typeof AgentConfiguration>;

const CONFIGURATION_FIELDS = Object.keys(AgentConfiguration.shape) as (keyof AgentConfigurationValues)[];

function present(value: unknown): boolean {
  return value !== undefined && value !== null && !(typeof value === "string" && value.trim() === "");
}

/**
 * The configuration fields a run was given. `configurable` wins over `context` (Studio may send
 * either: the API reports the schema as both). Blank values count as unset, so clearing a field
 * in Studio restores the default. Values are returned as given; settings validate them.
 */
export function readConfiguration(config: LangGraphRunnableConfig | undefined): Record<string, unknown> {
  const configurable = (config?.configurable ?? {}) as Record<string, unknown>;
  const context = (config?.context ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of CONFIGURATION_FIELDS) {
    const value = present(configurable[field]) ? configurable[field] : context?.[field];
    if (present(value)) out[field] = typeof value === "string" ? value.trim() : value;
  }
  return out;
}
