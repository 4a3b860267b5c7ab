import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessageChunk, BaseMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Settings } from "../settings.js";
import type { StudioApprovalCodes } from "../contracts/approval-codes.js";
import { createTools, type Preview, type Toolset, type ToolOptions } from "../tools/index.js";
import type { PriceTable } from "../models/cost.js";
import { createChatModel } from "../models/model.js";
import { buildSystemPrompt } from "../context/prompt.js";
import type { ToolJournal } from "../memory/tool-journal.js";
import type { ToolHooks } from "../guard/hooks.js";
import { taskTool, type SubagentType } from "../tools/task.js";

/**
 * The seam between the engines: everything an engine needs besides its own orchestration. The
 * graph (src/graph/) and the loop (src/loop/) are both built from one AgentRuntime, so they
 * differ only in how they sequence the same steps.
 */
export interface AgentRuntime {
  /** The chat model without tools bound (each engine binds `tools` itself; summaries use it bare). */
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  /** What a call of a tool that has one would change, for the approval question (tools/index.ts Toolset.previews). */
  previews?: Readonly<Record<string, Preview>>;
  /** Rebuilt every model turn: it carries the date and the project's AGENTS.md. */
  /** The system prompt for a run in `approval` mode (default: the runtime's). */
  systemPrompt: (approval?: Settings["approval"]) => string;
  /** Default approval mode; a run may override it. */
  approval: Settings["approval"];
  /** Default model turns per request; a run may override it. */
  maxSteps: number;
  contextTokens: number;
  /** Workspace root: commands are judged against it and its rules files; loop threads live under it. */
  workspace: string;
  /** The model's name for its price (undefined for the offline model: no cost). */
  modelName?: string;
  /** Price overrides (MINI_CURSOR_PRICES). */
  prices?: PriceTable;
  /**
   * Under Studio: a resume approves only with its interrupt's one-time code, which the dev server
   * prints to its terminal and keeps out of every command's, file's and API's reach (graph/studio-secret.ts).
   */
  studioApprovals?: StudioApprovalCodes;
  /** The write-ahead journal of tool calls (memory/tool-journal.ts); none in tests. */
  journal?: ToolJournal;
  /**
   * Where the trust answers for rules files and the user's own MCP config are (from Settings),
   * so that judging a call reads no environment mid-run; unset, the defaults of settings.ts apply.
   */
  configFiles?: ConfigFiles;
  /** The person's hooks around tool calls (guard/hooks.ts); none when none are configured. */
  hooks?: ToolHooks;
  /** How long a hook that sets no timeout of its own may run (Settings.hookTimeoutMs). */
  hookTimeoutMs?: number;
  /** The agent types the `task` tool can start (tools/task.ts); none: no `task` tool. */
  subagents?: readonly SubagentType[];
  /** Set on a sub-agent's runtime (agent/subagents.ts): its type. Such a runtime starts no sub-agents and never time-travels. */
  subagent?: SubagentType;
  /**
   * Settles a run's approval mode and step limit from its config (graph/run-config.ts
   * runSettings); absent, the config's values or the runtime's defaults. Studio's validates what
   * any process can send and keeps the mode no looser than the server's.
   */
  settleRun?: (config: { configurable?: Record<string, unknown> } | undefined) => {
    approval: Settings["approval"];
    maxSteps: number;
  };
  /** Makes the chat model an agent type names (its `model`); absent when the model was injected (tests, replay). */
  modelFor?: (name: string) => BaseChatModel;
}

/** The files outside the workspace that approvals read: the trust store and the user's MCP config. */
export interface ConfigFiles {
  trustStore: string;
  mcpUserConfig: string;
}

/** The settings a runtime is built from. */
export type RuntimeSettings = Pick<
  Settings,
  | "workspace"
  | "model"
  | "apiKey"
  | "baseUrl"
  | "provider"
  | "requestTimeoutMs"
  | "maxRetries"
  | "approval"
  | "maxSteps"
  | "contextTokens"
  | "prices"
> &
  // The provider wire's settings (src/provider/), all optional.
  Pick<Settings, "temperature" | "extraBody" | "streamOptions" | "stream" | "additionalProperties"> &
  Partial<Pick<Settings, "editTool" | "waitNoticeMs" | "trustStore" | "mcp" | "network">>;

export interface RuntimeOptions {
  /** A model to use instead of the one the settings name (tests inject scripted models). */
  model?: BaseChatModel;
  /** Tools to use instead of `createTools` for the settings' workspace. */
  tools?: StructuredToolInterface[];
  /** Whether commands run in bubblewrap (what the system prompt tells the model). */
  sandboxed?: boolean;
  /** Passed to `createTools` when it is called here. */
  toolOptions?: Omit<ToolOptions, "workspace">;
  /** Agent types for the `task` tool (context/agent-files.ts); given, the toolset gains `task`. */
  subagents?: readonly SubagentType[];
}

export function createRuntime(settings: RuntimeSettings, options: RuntimeOptions = {}): AgentRuntime {
  const base =
    options.tools ??
    createTools({ workspace: settings.workspace, editTool: settings.editTool, ...options.toolOptions });
  const tools = options.subagents?.length ? [...base, taskTool(options.subagents)] : base;
  return {
    model: options.model ?? createChatModel(settings),
    tools,
    previews: (base as Partial<Toolset>).previews ?? {},
    systemPrompt: (approval = settings.approval) =>
      buildSystemPrompt({
        workspace: settings.workspace,
        tools: tools.map((t) => t.name),
        approval,
        sandbox: { active: options.sandboxed ?? false, network: settings.network ?? true },
      }),
    approval: settings.approval,
    maxSteps: settings.maxSteps,
    contextTokens: settings.contextTokens,
    workspace: settings.workspace,
    // The offline model is free; a real one is priced by its name (models/cost.ts).
    modelName: settings.provider === "offline" ? undefined : settings.model,
    prices: settings.prices,
    ...(options.subagents?.length ? { subagents: options.subagents } : {}),
    ...(options.model ? {} : { modelFor: (name: string) => createChatModel({ ...settings, model: name }) }),
    ...(settings.trustStore && settings.mcp
      ? { configFiles: { trustStore: settings.trustStore, mcpUserConfig: settings.mcp.userConfig } }
      : {}),
  };
}

/** The model with the runtime's tools bound, made once per runtime and shared by every run. */
type ToolCallingModel = Runnable<BaseLanguageModelInput, AIMessageChunk | BaseMessage>;
const boundModels = new WeakMap<AgentRuntime, ToolCallingModel>();
export function boundModel(runtime: AgentRuntime): ToolCallingModel {
  let bound = boundModels.get(runtime);
  if (!bound) boundModels.set(runtime, (bound = runtime.model.bindTools?.(runtime.tools) ?? runtime.model));
  return bound;
}
