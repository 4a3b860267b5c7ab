import { declarationOf, type ToolDeclaration, type ToolKind } from "../contracts/tools.js";
import type { ApprovalMode } from "../contracts/modes.js";
import { patchPaths } from "../workspace/patch-parse.js";
import { globBase } from "../workspace/walk.js";

/**
 * What a call's declared effects (its tool's declaration: kind and path arguments,
 * contracts/tools.ts) mean for it: when it asks, whether plan mode lets it run, whether the
 * workspace is snapshotted around it. The one table every such decision reads, so a new tool
 * gets all of them from its declaration, as Gemini CLI derives them from a tool's Kind.
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

/** A tool as the policy sees it: its name, its metadata (which carries its declaration) and its schema. */
export interface ToolLike {
  name: string;
  metadata?: Record<string, unknown>;
  schema?: unknown;
}

/** What one call will do: `paths` undefined means it may touch anything. */
export interface CallEffects {
  kind: ToolKind | undefined;
  paths: string[] | undefined;
}

/** The paths a call names, read from its arguments as its tool declares them. */
function declaredPaths(declaration: ToolDeclaration, args: Record<string, unknown>): string[] | undefined {
  if (!declaration.paths) return undefined;
  const paths: string[] = [];
  for (const [name, how] of Object.entries(declaration.paths)) {
    const value = args[name];
    const text = typeof value === "string" ? value : undefined;
    if (how === "path" && Array.isArray(value)) paths.push(...value.filter((v): v is string => typeof v === "string"));
    else if (how === "path") paths.push(text ?? ".");
    else if (how === "glob") paths.push(globBase(text ?? ""));
    else paths.push(...(text === undefined ? [] : patchPaths(text)));
  }
  return paths;
}

/**
 * The effects of a call, from the toolset's tool of that name (none there: it declares nothing).
 * The arguments are read as the tool reads them (its zod schema maps other agents' names);
 * arguments that do not fit touch nothing: the tool refuses them before it does anything.
 */
export function callEffects(
  call: { name: string; args: Record<string, unknown> },
  tools?: readonly ToolLike[],
): CallEffects {
  const tool = tools?.find((t) => t.name === call.name);
  const declaration = declarationOf(tool);
  const parsed = (
    tool as { schema?: { safeParse?(v: unknown): { success: boolean; data?: unknown } } } | undefined
  )?.schema?.safeParse?.(call.args ?? {});
  if (parsed && !parsed.success) return { kind: declaration.kind, paths: declaration.paths ? [] : undefined };
  const args = (parsed ? parsed.data : call.args) as Record<string, unknown>;
  return { kind: declaration.kind, paths: declaredPaths(declaration, args ?? {}) };
}

/** The names of the tools that only look (kind read): what plan mode runs. */
export function readOnlyTools(tools: readonly ToolLike[]): string[] {
  return tools.filter((t) => declarationOf(t).kind === "read").map((t) => t.name);
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
