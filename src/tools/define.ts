import { parseCallbackConfigArg, type CallbackManagerForToolRun } from "@langchain/core/callbacks/manager";
import { ToolMessage } from "@langchain/core/messages";
import { patchConfig, pickRunnableConfigKeys, raceWithSignal } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { StructuredTool, type StructuredToolInterface, type ToolRunnableConfig } from "@langchain/core/tools";
import type { z } from "zod";
import type { Todo } from "./todos.js";
import { redactorFor, redactValue, type Redactor } from "../workspace/redact.js";
import { toolErrorMessage, ToolFailure } from "./errors.js";
import { threadOf } from "./read-tracker.js";
import { argumentsRefusal } from "./arguments.js";
import { withThousands } from "../thousands.js";

/**
 * One tool definition and one wrapper. A tool says what it is (name, description and schema,
 * written for the model), what it does (`run`) and, if a person deciding about a call should see
 * what it would change, how to show that (`preview`). `createTool` turns a definition into the
 * LangChain tool both engines run, and owns what every tool needs the same way:
 * - failures: `run` throws a ToolFailure (or anything else) and the call's result is a
 *   ToolMessage with status "error" — the trace's ✗, `--json`, Studio's state and the model all
 *   see the same typed status;
 * - secrets: the known secret values are blanked in results, artifacts and failure texts;
 * - size: a result longer than MAX_TOOL_RESULT_CHARS keeps its start and end;
 * - artifacts: what the trace gets besides the text (a diff, a command's exit code), never sent
 *   to the model.
 */

/** What a tool's `run` and `preview` get besides the arguments. */
export interface ToolCallInfo {
  /** The conversation (edit_file checks the file was read in this thread). */
  threadId?: string;
  /** Cancelled when the user interrupts the run. */
  signal?: AbortSignal;
  /** The call's id, for live output that names its call. */
  toolCallId?: string;
}

/** What the trace gets with a result besides its text; never sent to the model. */
export interface ToolArtifact {
  /** A unified diff of a file change. */
  diff?: string;
  /** A command's exit code when it failed (null: it could not start). */
  exitCode?: number | null;
  /** write_todos: the list as the model wrote it, for the engines to keep in the thread's state. */
  todos?: Todo[];
}

/**
 * What a call does to the world, as Gemini CLI's tool `Kind`; approval, plan mode, snapshots and
 * the order calls run in are derived from it (policy/effects.ts):
 * - read: looks and changes nothing (read_file, search_files; write_todos, which only sets the
 *   thread's own list);
 * - edit: changes the workspace files its `paths` name;
 * - execute: runs programs, which may touch anything;
 * - fetch: reaches the network (what it sends may carry the workspace's content);
 * - other: acts only on what this session itself started (stop_process).
 * A tool that declares no kind is treated as the most dangerous: it asks in every mode but
 * full-auto, plan mode refuses it, and it runs alone.
 */
export const TOOL_KINDS = ["read", "edit", "execute", "fetch", "other"] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** A successful call's result: the text the model reads, and optionally an artifact. */
export type ToolOutput = string | { content: string; artifact?: ToolArtifact };

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  /** For the model: what the tool does, its limits, what it returns. */
  description: string;
  /** Validated before `run`; a call that does not match gets an error result. */
  schema: S;
  /** Does the call. Throws ToolFailure with the text the model should read when it cannot. */
  run(input: z.output<S>, call: ToolCallInfo): Promise<ToolOutput>;
  /** For the approval question: what the call would change (a diff), without changing anything. */
  preview?(input: z.output<S>, call: ToolCallInfo): Promise<string | undefined>;
  /** What a call does (see ToolKind). Undeclared: it asks in every mode but full-auto and plan mode refuses it. */
  kind?: ToolKind;
  /**
   * The workspace paths a call reads (kind read) or changes (kind edit), as the call names them,
   * relative to the workspace root. Protected ones (any `.git`, the rules files, mini-cursor's
   * state) ask in every mode and are named in the question; calls whose paths overlap run one
   * after another. Without it a call may touch anything: it runs alone.
   */
  paths?(input: z.output<S>): string[];
}

/**
 * What one call will do, from its tool's declaration: `paths` undefined means it may touch
 * anything (no declaration, or arguments it could not read).
 */
export interface CallEffects {
  kind: ToolKind | undefined;
  paths: string[] | undefined;
}

/**
 * The declared effects of a call to `tool` (undefined: a tool this toolset does not have). A
 * tool not made by createTool (an MCP server's) declares nothing. Arguments that do not fit
 * the schema touch nothing: the tool refuses them before it does anything.
 */
export function effectsOf(tool: unknown, args: Record<string, unknown>): CallEffects {
  if (!(tool instanceof AgentTool)) return { kind: undefined, paths: undefined };
  const { kind, paths } = tool.definition;
  if (!paths) return { kind, paths: undefined };
  const parsed = tool.schema.safeParse(args);
  if (!parsed.success) return { kind, paths: [] };
  try {
    return { kind, paths: paths(parsed.data) };
  } catch {
    return { kind, paths: undefined };
  }
}

/** A tool not made by createTool (an MCP server's) may carry this to have its arguments checked before approval. */
export interface ChecksArguments {
  checkArguments?(args: unknown): string | undefined;
}

/**
 * The refusal of a call whose arguments do not fit its tool, or undefined (they fit, or nothing
 * checks them). Both engines answer such a call before any approval question (agent/turn.ts),
 * so nobody is asked about a call that cannot run.
 */
export function argumentsRefusalOf(tool: unknown, args: unknown): string | undefined {
  if (tool instanceof AgentTool) return argumentsRefusal(tool.name, tool.schema, args);
  const check = (tool as ChecksArguments | undefined)?.checkArguments;
  return typeof check === "function" ? check.call(tool, args) : undefined;
}

/** Declares a tool (an identity function, so `run` and `preview` get their input's type from the schema). */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}

/**
 * The most characters one result keeps, far above every built-in tool's own limit (they cut
 * their output where it makes sense for them); a guard for tools without one.
 */
export const MAX_TOOL_RESULT_CHARS = 200_000;
/** Of a cut result: how much of its start is kept (the rest of the budget is its end). */
const HEAD_SHARE = 0.5;

function capped(text: string): string {
  if (text.length <= MAX_TOOL_RESULT_CHARS) return text;
  const head = Math.floor(MAX_TOOL_RESULT_CHARS * HEAD_SHARE);
  const tail = MAX_TOOL_RESULT_CHARS - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[… ${withThousands(cut)} characters not shown: the result was longer than ${withThousands(MAX_TOOL_RESULT_CHARS)} characters …]\n\n${text.slice(-tail)}`;
}

export interface CreateToolOptions {
  /** Values (such as the API key) replaced by [redacted] in everything the tool returns. */
  redact?: readonly string[];
}

interface ToolCallInput {
  id?: string;
  type?: string;
}

function toolCallId(input: unknown, config: ToolRunnableConfig | undefined): string | undefined {
  const call = input as ToolCallInput | undefined;
  if (call && typeof call === "object" && call.type === "tool_call" && call.id) return call.id;
  return config?.toolCall?.id;
}

/**
 * What a failed call returns (the one place a failure becomes a result): a ToolMessage with
 * status "error" for a tool call, the bare text for bare arguments. After a cancellation the
 * error is passed on, so the engines see it.
 */
function failedCall(
  err: unknown,
  input: unknown,
  config: ToolRunnableConfig | undefined,
  name: string,
  redact: (text: string) => string,
) {
  if (!(err instanceof ToolFailure) && config?.signal?.aborted) throw err;
  const content = capped(redact(toolErrorMessage(err)));
  const id = toolCallId(input, config);
  if (!id) return content;
  const details = err instanceof ToolFailure ? err.details : {};
  const artifact = Object.keys(details).length > 0 ? details : undefined;
  return new ToolMessage({ tool_call_id: id, name, status: "error", content, ...(artifact ? { artifact } : {}) });
}

/**
 * A tool not defined here (an MCP server's, built by @langchain/mcp-adapters, with a JSON schema
 * rather than zod) gets createTool's guarantees without its definition: failures become results
 * with status "error", known secrets are blanked and the text is capped. Wraps in place, so the
 * tool keeps its name, schema and metadata.
 */
export function guardTool<T extends StructuredToolInterface>(tool: T, options: CreateToolOptions = {}): T {
  const redactor = redactorFor(options.redact ?? []);
  const redact = <V>(value: V): V => (redactor.active ? redactValue(value, redactor) : value);
  const clean = (text: unknown) => (typeof text === "string" ? capped(redact(text)) : redact(text));
  const invoke = tool.invoke.bind(tool);
  const guarded = async (input: unknown, config?: ToolRunnableConfig) => {
    try {
      const output: unknown = await invoke(input as never, config as never);
      if (!ToolMessage.isInstance(output)) return clean(output);
      output.content = clean(output.content) as typeof output.content;
      return output;
    } catch (err) {
      return failedCall(err, input, config, tool.name, redact);
    }
  };
  return Object.assign(tool, { invoke: guarded as T["invoke"] });
}

/** The LangChain tool made from a definition (createTool). */
export class AgentTool<S extends z.ZodType = z.ZodType> extends StructuredTool {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  override responseFormat = "content_and_artifact" as const;
  readonly definition: ToolDefinition<S>;
  private readonly redactor: Redactor;

  constructor(definition: ToolDefinition<S>, options: CreateToolOptions = {}) {
    super();
    this.definition = definition;
    this.name = definition.name;
    this.description = definition.description;
    this.schema = definition.schema;
    this.redactor = redactorFor(options.redact ?? []);
  }

  private redact<T>(value: T): T {
    return this.redactor.active ? redactValue(value, this.redactor) : value;
  }

  private async run(
    input: z.output<S>,
    config: ToolRunnableConfig | undefined,
  ): Promise<[string, ToolArtifact | undefined]> {
    const output = await this.definition.run(input, {
      threadId: threadOf(config),
      signal: config?.signal,
      toolCallId: config?.toolCall?.id,
    });
    const { content, artifact } = typeof output === "string" ? { content: output, artifact: undefined } : output;
    return [capped(this.redact(content)), this.redact(artifact)];
  }

  /**
   * As LangChain's `tool()` runs a function: with the run's config in scope for anything it
   * calls (tracing), and given up on as soon as the run is cancelled — the call rejects at once
   * while the tool stops its own work (a command's process group) through the same signal.
   */
  protected override async _call(
    input: z.output<S>,
    runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<[string, ToolArtifact | undefined]> {
    const child = patchConfig(config, { callbacks: runManager?.getChild() }) as ToolRunnableConfig;
    const work = new Promise<[string, ToolArtifact | undefined]>((resolve, reject) => {
      AsyncLocalStorageProviderSingleton.runWithConfig(pickRunnableConfigKeys(child), () =>
        this.run(input, child).then(resolve, reject),
      );
    });
    return config?.signal ? raceWithSignal(work, config.signal) : work;
  }

  /** Traces name the run after the tool (as LangChain's own `tool()` does), not after this class. */
  override async call(
    ...[arg, configArg, tags]: Parameters<StructuredTool["call"]>
  ): ReturnType<StructuredTool["call"]> {
    const config = parseCallbackConfigArg(configArg);
    if (config.runName === undefined) config.runName = this.name;
    // Arguments that do not fit are refused, never dropped or half-used (arguments.ts words why).
    const call = arg as { type?: string; args?: unknown } | undefined;
    const args = call && typeof call === "object" && call.type === "tool_call" ? call.args : arg;
    const refusal = argumentsRefusal(this.name, this.schema, args);
    if (refusal) throw new ToolFailure(refusal);
    return super.call(arg, config, tags);
  }

  /**
   * Runs a call; a failure never crashes the run, it becomes a result with status "error".
   * Called with a tool call (the engines, Studio) it returns a ToolMessage; called with
   * bare arguments (tests, scripts) it returns the text. An error after the run was cancelled is
   * passed on, so the engines see the cancellation.
   */
  override async invoke<
    TInput extends Parameters<StructuredTool["invoke"]>[0],
    TConfig extends ToolRunnableConfig | undefined,
  >(input: TInput, config?: TConfig): ReturnType<StructuredTool["invoke"]> {
    try {
      return await super.invoke(input, config);
    } catch (err) {
      return failedCall(err, input, config as ToolRunnableConfig | undefined, this.name, (text) =>
        this.redact(text),
      ) as never;
    }
  }

  /** The approval preview of a call (undefined when the tool has none or the arguments do not fit); never throws. */
  readonly preview = async (args: Record<string, unknown>, threadId?: string): Promise<string | undefined> => {
    if (!this.definition.preview) return undefined;
    const parsed = this.schema.safeParse(args);
    if (!parsed.success) return undefined;
    try {
      const text = await this.definition.preview(parsed.data as z.output<S>, { threadId });
      return text === undefined ? undefined : this.redact(text);
    } catch {
      return undefined;
    }
  };
}

/** The tool both engines run, from its definition. */
export function createTool<S extends z.ZodType>(
  definition: ToolDefinition<S>,
  options: CreateToolOptions = {},
): AgentTool<S> {
  return new AgentTool(definition, options);
}
