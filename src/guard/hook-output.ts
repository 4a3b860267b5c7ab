import { z } from "zod";
import type { HookRunResult } from "../workspace/hook-process.js";

/**
 * What a hook that exits 0 may print on stdout, in Claude Code's shape: one JSON object whose
 * fields steer what happens next. Text that is not such an object is plain output (context for
 * the events that add it, else nothing). Unknown fields are ignored: a newer Claude Code field
 * must not break the hook here.
 */
const hookOutputSchema = z.looseObject({
  /** false: the turn stops after this hook, `stopReason` says why to the person. */
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  /** Shown to the person, never to the model. */
  systemMessage: z.string().optional(),
  /** The hook's stdout is kept out of the trace. */
  suppressOutput: z.boolean().optional(),
  /** "block" blocks (before a call, a prompt, a stop); Claude Code's older "approve" is read as allow. */
  decision: z.string().optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      permissionDecision: z.enum(["allow", "deny", "ask"]).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

/** A hook's answer, read: what each event does with it is the caller's (guard/hooks.ts, app/hooks.ts). */
export interface HookAnswer {
  /** Blocked: exit 2 (or any non-zero exit, a timeout, a failure to start: we fail closed), `decision: "block"`, `permissionDecision: "deny"`. */
  block?: string;
  /** `permissionDecision: "ask"`, with its reason. */
  ask?: string;
  /** `permissionDecision: "allow"` (or the older `decision: "approve"`). */
  allow?: boolean;
  updatedInput?: Record<string, unknown>;
  /** `additionalContext`, else (for the events that add stdout) plain stdout. */
  context?: string;
  /** `continue: false`: the turn stops; the reason is `stopReason`. */
  stop?: string;
  systemMessage?: string;
  suppressOutput?: boolean;
}

/** Reads a hook's stdout as Claude Code's JSON when it is one object; undefined when it is not. */
function parsedOutput(stdout: string): z.output<typeof hookOutputSchema> | undefined {
  const text = stdout.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    const parsed = hookOutputSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A hook's answer from how it ended. A hook that exited non-zero blocks with `blockReason` (its
 * stderr, else what happened); one that exited 0 answers with its JSON, or its plain stdout as
 * context when `stdoutIsContext` (UserPromptSubmit, SessionStart: as in Claude Code).
 */
export function readHookAnswer(run: HookRunResult, blockReason: string, stdoutIsContext = false): HookAnswer {
  if (run.status !== "exited" || run.exitCode !== 0) return { block: blockReason };
  const json = parsedOutput(run.stdout);
  if (!json) return stdoutIsContext && run.stdout.trim() ? { context: run.stdout.trim() } : {};
  const specific = json.hookSpecificOutput ?? {};
  const answer: HookAnswer = {};
  const why = specific.permissionDecisionReason ?? json.reason;
  if (json.decision === "block" || specific.permissionDecision === "deny")
    answer.block = why?.trim() || "it blocked this without giving a reason";
  else if (specific.permissionDecision === "ask") answer.ask = why?.trim() || "it asked for the user's approval";
  else if (specific.permissionDecision === "allow" || json.decision === "approve") answer.allow = true;
  if (specific.updatedInput) answer.updatedInput = specific.updatedInput;
  if (specific.additionalContext?.trim()) answer.context = specific.additionalContext.trim();
  if (json.continue === false) answer.stop = json.stopReason?.trim() || "a hook stopped the turn";
  if (json.systemMessage?.trim()) answer.systemMessage = json.systemMessage.trim();
  if (json.suppressOutput) answer.suppressOutput = true;
  return answer;
}
