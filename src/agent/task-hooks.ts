import type { ToolMessage } from "@langchain/core/messages";
import type { GuardConfig } from "../guard/guard.js";
import { HOOK_STOP, hookPayload, hooksGuard, runEventHooks } from "../guard/hooks.js";
import { messageText } from "./turn.js";
import { callMode, hookJudge } from "./hook-judge.js";
import type { AgentRuntime } from "./runtime.js";

/**
 * The person's hooks around a `task` call, which the engines run outside the guarded tools (the
 * graph's subagent node, the loop's sub-agent runs): PreToolUse and PostToolUse as for any call
 * (guard/hooks.ts, the same guard), and SubagentStop when its sub-agent ends. A SubagentStop hook
 * that blocks cannot resume the sub-agent (its conversation ends with it): its reason is added to
 * the call's result, so the parent model may start it again. `stop`: a hook answered
 * `continue: false` around the call, which ends the parent's run as it does after any call.
 * `resumed`: the call runs again after a question in its sub-agent; its PreToolUse hooks ran then.
 */
export async function withTaskHooks(
  runtime: AgentRuntime,
  call: { id?: string; name: string; args: Record<string, unknown> },
  config: GuardConfig,
  run: (args: Record<string, unknown>) => Promise<ToolMessage>,
  resumed = false,
): Promise<{ result: ToolMessage; stop: boolean }> {
  const hooks = runtime.hooks;
  if (!hooks || hooks.specs.length === 0) return { result: await run(call.args), stop: false };
  const guard = hooksGuard(
    hooks,
    { workspace: runtime.workspace, timeoutMs: runtime.hookTimeoutMs, modeOf: (c) => callMode(runtime, c) },
    hookJudge(runtime),
  );
  const context = {
    call: { id: call.id ?? "", name: call.name, args: call.args },
    config,
    update: {} as Record<string, unknown>,
    resumed,
  };
  const result = await guard(context, async () => {
    const result = await run(context.call.args);
    const threadId = String(config.configurable?.thread_id ?? "");
    const input = hookPayload(
      "SubagentStop",
      { threadId, workspace: runtime.workspace, mode: callMode(runtime, config) },
      {
        stop_hook_active: false,
        agent_id: call.id,
        agent_type: call.args.subagent_type,
        last_assistant_message: messageText(result),
      },
    );
    const ran = await runEventHooks(hooks, "SubagentStop", String(call.args.subagent_type ?? ""), input, {
      id: call.id,
      signal: config.signal,
      timeoutMs: runtime.hookTimeoutMs,
    });
    const blocks = ran.flatMap((r) => (r.answer.block ? [`${r.spec.label}: ${r.answer.block}`] : []));
    if (blocks.length === 0) return result;
    return Object.assign(result, {
      content: `${messageText(result)}\n\nNote: a SubagentStop hook the user configured asked for more work from this sub-agent (${blocks.join("; ")}). The sub-agent has ended; start it again with that in its prompt if it applies.`,
    });
  });
  return { result, stop: context.update.stopReason === HOOK_STOP };
}

/** The person's PreCompact hooks before the automatic summary near the context budget (both engines: agent/model-turn.ts). */
export async function autoCompactHooks(
  runtime: AgentRuntime,
  mode: string,
  config: { configurable?: Record<string, unknown>; signal?: AbortSignal } | undefined,
): Promise<void> {
  if (!runtime.hooks?.specs.some((s) => s.event === "PreCompact")) return;
  const threadId = String(config?.configurable?.thread_id ?? "");
  const input = hookPayload(
    "PreCompact",
    { threadId, workspace: runtime.workspace, mode },
    {
      trigger: "auto",
      custom_instructions: "",
    },
  );
  await runEventHooks(runtime.hooks, "PreCompact", "auto", input, {
    signal: config?.signal,
    timeoutMs: runtime.hookTimeoutMs,
  });
}
