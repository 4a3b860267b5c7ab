import { effectsOf, type CallEffects, type ToolKind } from "../tools/define.js";
import { builtInTool } from "../tools/index.js";
import type { ApprovalMode } from "../settings.js";

/**
 * What a call's declared effects (ToolDefinition.kind and .paths) mean for it: when it asks,
 * whether plan mode lets it run, whether the workspace is snapshotted around it. The one table
 * every such decision reads, so a new tool gets all of them from its declaration, as Gemini
 * CLI derives them from a tool's Kind.
 */

/** A declared kind, or "undeclared" for a tool that declares none (an MCP server's, a new one). */
export type EffectClass = ToolKind | "undeclared";

interface KindRule {
  /** The approval modes in which a call asks (unless an "always" answer covers it). */
  asksIn: readonly ApprovalMode[];
  /** Whether plan mode lets it run (only looking does). */
  inPlanMode: boolean;
  /** Whether it may change workspace files: a snapshot is taken around it. */
  changesFiles: boolean;
  /** Whether the paths it names are written: protected ones ask in every mode. */
  writes: boolean;
}

export const KIND_RULES: Readonly<Record<EffectClass, KindRule>> = {
  read: { asksIn: [], inPlanMode: true, changesFiles: false, writes: false },
  edit: { asksIn: ["suggest"], inPlanMode: false, changesFiles: true, writes: true },
  execute: { asksIn: ["suggest", "auto-edit"], inPlanMode: false, changesFiles: true, writes: true },
  fetch: { asksIn: ["suggest", "auto-edit"], inPlanMode: false, changesFiles: false, writes: false },
  other: { asksIn: [], inPlanMode: false, changesFiles: false, writes: false },
  undeclared: { asksIn: ["suggest", "auto-edit"], inPlanMode: false, changesFiles: true, writes: true },
};

/** A tool as the policy sees it: its name, and (for tools made by createTool) its definition. */
export interface ToolLike {
  name: string;
  metadata?: Record<string, unknown>;
}

/**
 * The effects of a call, from the toolset's tool of that name; without a toolset (or when it
 * lacks the name) from the built-in tool of that name; otherwise nothing is declared.
 */
export function callEffects(
  call: { name: string; args: Record<string, unknown> },
  tools?: readonly ToolLike[],
): CallEffects {
  const tool = tools?.find((t) => t.name === call.name) ?? builtInTool(call.name);
  return effectsOf(tool, call.args ?? {});
}

export function effectClass(effects: Pick<CallEffects, "kind">): EffectClass {
  return effects.kind ?? "undeclared";
}

export function ruleFor(effects: Pick<CallEffects, "kind">): KindRule {
  return KIND_RULES[effectClass(effects)];
}

/** Why a call asks in this mode by its kind alone (protected paths and commands are judged apart). */
export function kindReason(call: { name: string }, effects: CallEffects, mode: ApprovalMode): string {
  const paths = effects.paths?.length ? effects.paths.join(", ") : undefined;
  switch (effectClass(effects)) {
    case "edit":
      return `changes ${paths ?? "a file"} (approval mode ${mode})`;
    case "execute":
      return `runs a program (approval mode ${mode})`;
    case "fetch":
      return `reaches the network (approval mode ${mode})`;
    case "undeclared":
      return `${call.name} does not declare what it does, so it asks before it runs (approval mode ${mode})`;
    default:
      return `approval mode ${mode}`;
  }
}
