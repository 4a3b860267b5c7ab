import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Guard } from "../guard/guard.js";
import type { z } from "zod";
import { unsupportedReason } from "./aliases.js";

/**
 * The refusal of a call whose arguments do not fit its tool. zod's strict objects find names the
 * tool does not take (after other agents' names were mapped, aliases.ts); this words the answer
 * so the model can retry at once: which names, why when we know (a peer argument we cannot
 * honour), the names the tool does take at the level where the stray one was (an item of
 * edit_file's edits), and every other problem with its argument's name.
 */

interface ZodDefLike {
  type?: string;
  in?: z.ZodType;
  out?: z.ZodType;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const defOf = (schema: z.ZodType | undefined): ZodDefLike | undefined =>
  (schema as unknown as { _zod?: { def?: ZodDefLike } } | undefined)?._zod?.def;

/** The schema inside wrappers (preprocess, optional, default, nullable). */
function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (let def = defOf(current); def; def = defOf(current)) {
    if (def.type === "pipe") current = def.out;
    else if (def.type === "optional" || def.type === "default" || def.type === "nullable") current = def.innerType;
    else return current;
  }
  return current;
}

/** The argument names an object at `path` takes. */
function namesAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current = unwrap(schema);
  for (const step of path) {
    const def = defOf(current);
    if (typeof step === "number" && def?.type === "array") current = unwrap(def.element);
    else if (typeof step === "string" && def?.shape) current = unwrap(def.shape[step]);
    else return [];
  }
  return Object.keys(defOf(current)?.shape ?? {});
}

const where = (path: readonly PropertyKey[]) =>
  path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");

/** The refusal text, or undefined when the arguments are valid. */
export function argumentsRefusal(toolName: string, schema: z.ZodType, args: unknown): string | undefined {
  const parsed = schema.safeParse(args);
  if (parsed.success) return undefined;
  const lines: string[] = [];
  const unknownKeys: string[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code !== "unrecognized_keys") {
      const missing = issue.code === "invalid_type" && / received undefined$/.test(issue.message);
      const text = missing ? "required, and missing" : issue.message;
      lines.push(`- ${issue.path.length > 0 ? `${where(issue.path)}: ` : ""}${text}.`);
      continue;
    }
    const at = issue.path.length > 0 ? ` in ${where(issue.path)}` : "";
    unknownKeys.push(`${toolName} does not take ${issue.keys.map((k) => `"${k}"`).join(", ")}${at}.`);
    for (const key of issue.keys) {
      const reason = unsupportedReason(schema, issue.path, key);
      if (reason) unknownKeys.push(`- ${key}: ${reason}.`);
    }
    const names = namesAt(schema, issue.path);
    const item =
      issue.path.length > 0
        ? `Each item of ${where(issue.path.filter((p) => typeof p !== "number"))} takes`
        : "Its arguments are";
    unknownKeys.push(`${item}: ${names.join(", ")}.`);
  }
  const head = lines.length > 0 ? [`${toolName} got invalid arguments:`, ...lines] : [];
  return `Error: ${[...unknownKeys, ...head].join("\n")}\nThe call was not run: call it again with valid arguments.`;
}

/** A tool not made with zod (an MCP server's, with a JSON schema) may check its arguments itself (mcp/hub.ts). */
export interface ChecksArguments {
  checkArguments?(args: unknown): string | undefined;
}

/** The refusal of a call whose arguments do not fit `tool`, or undefined (they fit, or nothing checks them). */
export function argumentsRefusalOf(tool: StructuredToolInterface | undefined, args: unknown): string | undefined {
  const check = (tool as ChecksArguments | undefined)?.checkArguments;
  if (typeof check === "function") return check.call(tool, args);
  const schema = tool?.schema as z.ZodType | undefined;
  return schema && typeof schema.safeParse === "function" ? argumentsRefusal(tool!.name, schema, args) : undefined;
}

/**
 * The guard every tool of a toolset runs inside first (tools/index.ts): arguments that do not fit
 * are refused with what is wrong, never dropped or half-used. Both engines answer such a call
 * before any approval question (agent/dispatch.ts reviewTurn), so nobody is asked about a call
 * that cannot run; this is the same check wherever a tool is called.
 */
export function argumentsGuard(tool: StructuredToolInterface): Guard {
  return async ({ call }, next) => {
    const refusal = argumentsRefusalOf(tool, call.args);
    if (!refusal) return next();
    return new ToolMessage({ tool_call_id: call.id, name: call.name, status: "error", content: refusal });
  };
}
