import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { Engine, RunRequest, RunSummary } from "../agent/engine.js";
import { addGatedSecrets, gateValue } from "../workspace/output-gate.js";
import type { TracingSettings } from "../settings.js";

/**
 * LangSmith tracing of the CLI's turns (LANGSMITH_TRACING=true): each turn is one trace, a
 * root run named {@link TURN_RUN_NAME} with the engine's model and tool runs nested under it,
 * tagged with the engine and carrying the thread id (LangSmith groups a thread's turns by
 * `thread_id`) and the workspace's folder name. Everything posted — inputs, outputs, errors —
 * goes through the output gate (workspace/output-gate.ts), with the LangSmith key one of the
 * redacted values. langsmith is imported on the first traced turn only.
 */

export const TURN_RUN_NAME = "mini-cursor turn";
/** How long the CLI waits at exit for traces still being posted (LangSmith unreachable: it gives up). */
export const TRACE_FLUSH_TIMEOUT_MS = 5_000;
/** Retries of one LangSmith request: its default backoff held an exit for 90 s when the endpoint was down. */
const TRACE_REQUEST_RETRIES = 1;
/** One LangSmith request may take this long. */
const TRACE_REQUEST_TIMEOUT_MS = 10_000;
/** Where traces go without LANGSMITH_ENDPOINT, for messages. */
const LANGSMITH_CLOUD = "https://api.smith.langchain.com";
/** Tag on every trace, so a shared LangSmith project can be filtered to this agent. */
export const TRACE_TAG = "mini-cursor";

/** What LangSmith's library gets back once tracing is off: an empty success, so it neither logs nor retries. */
const dropped = () => new Response("{}", { status: 200, headers: { "content-type": "application/json" } });

/**
 * LangSmith's requests through a fetch that turns the first failure (a rejected key, an
 * endpoint that cannot be reached or does not answer) into one plain sentence and tracing off
 * for the rest of the run. The library itself would print `[LANGSMITH]` lines and stack traces
 * on stderr for every batch, retry each, and hold the exit (issue 31).
 */
function quietFetch(endpoint: string, onProblem: (message: string) => void): typeof fetch {
  let off = false;
  const stop = (why: string) => {
    if (off) return;
    off = true;
    onProblem(`LangSmith tracing is off for the rest of this run: ${why}. The run itself goes on.`);
  };
  return async (input, init) => {
    if (off) return dropped();
    try {
      const response = await fetch(input, init);
      if (response.status !== 401 && response.status !== 403) return response;
      await response.body?.cancel().catch(() => undefined);
      stop(
        `${endpoint} rejected LANGSMITH_API_KEY (HTTP ${response.status}); check the key (smith.langchain.com, Settings > API Keys) and LANGSMITH_ENDPOINT`,
      );
    } catch (err) {
      const e = err as { name?: string; cause?: { code?: string }; code?: string };
      const why =
        e?.name === "AbortError" || e?.name === "TimeoutError"
          ? `${endpoint} did not answer within ${TRACE_REQUEST_TIMEOUT_MS / 1000} s`
          : `${endpoint} cannot be reached (${e?.cause?.code ?? e?.code ?? (err as Error)?.message ?? String(err)})`;
      stop(`${why}; check LANGSMITH_ENDPOINT and the network`);
    }
    return dropped();
  };
}

export interface TracedEngine extends Engine {
  /** Waits until every run has been posted (call before the process exits). */
  flush(): Promise<void>;
}

interface Tracer {
  callbacks: CallbackManager;
  flush(): Promise<void>;
}

/**
 * A LangSmith client whose every payload passes the output gate (workspace/output-gate.ts):
 * known secrets (the LangSmith key among them) and credential-shaped text masked, control
 * characters made visible. The CLI's tracer and Studio's use it.
 */
export function gatedClientOptions(tracing: TracingSettings) {
  addGatedSecrets([tracing.apiKey]);
  const hide = (data: Record<string, unknown>) => gateValue(data);
  return {
    apiKey: tracing.apiKey,
    apiUrl: tracing.endpoint,
    hideInputs: hide,
    hideOutputs: hide,
    // The host's name, platform and library versions are not the user's to publish by default.
    omitTracedRuntimeInfo: true,
    callerOptions: { maxRetries: TRACE_REQUEST_RETRIES },
    timeout_ms: TRACE_REQUEST_TIMEOUT_MS,
  };
}

async function createTracer(
  tracing: TracingSettings,
  tags: string[],
  metadata: Record<string, unknown>,
  onProblem: (message: string) => void,
): Promise<Tracer> {
  const [{ Client }, { LangChainTracer }, { CallbackManager }, { awaitAllCallbacks }] = await Promise.all([
    import("langsmith"),
    import("@langchain/core/tracers/tracer_langchain"),
    import("@langchain/core/callbacks/manager"),
    import("@langchain/core/callbacks/promises"),
  ]);
  const client = new Client({
    ...gatedClientOptions(tracing),
    fetchImplementation: quietFetch(tracing.endpoint ?? LANGSMITH_CLOUD, onProblem),
  });
  const tracer = new LangChainTracer({ client, projectName: tracing.project });
  const callbacks = new CallbackManager();
  callbacks.addHandler(tracer, true);
  callbacks.addTags(tags, true);
  callbacks.addMetadata(metadata, true);
  return {
    callbacks,
    async flush() {
      // LangChain runs callbacks in the background; then the client batches what they queued.
      const posted = awaitAllCallbacks().then(() => client.awaitPendingTraceBatches());
      const done = new AbortController();
      const deadline = sleep(TRACE_FLUSH_TIMEOUT_MS, undefined, { ref: false, signal: done.signal });
      await Promise.race([posted, deadline.catch(() => undefined)]);
      done.abort();
    },
  };
}

export interface TraceContext {
  tracing: TracingSettings;
  /** Values redacted from every payload (the same list the tools redact, plus the LangSmith key). */
  secrets: readonly string[];
  workspace: string;
  /** Told once, in a sentence, when LangSmith rejects the key or cannot be reached (tracing is then off). */
  onProblem?: (message: string) => void;
}

/** The engine with each turn traced to LangSmith as one run tree. */
export function traceEngine(engine: Engine, context: TraceContext): TracedEngine {
  addGatedSecrets(context.secrets);
  const workspaceName = path.basename(context.workspace);
  let tracer: Promise<Tracer> | undefined;
  const load = () =>
    (tracer ??= createTracer(
      context.tracing,
      [TRACE_TAG, `engine:${engine.name}`],
      { engine: engine.name, workspace: workspaceName },
      context.onProblem ?? (() => undefined),
    ));
  return {
    name: engine.name,
    async run(request: RunRequest): Promise<RunSummary> {
      const { callbacks } = await load();
      const { RunnableLambda } = await import("@langchain/core/runnables");
      const turn = RunnableLambda.from(async (input: { task: string }, config) =>
        engine.run({ ...request, task: input.task, callbacks: config?.callbacks as CallbackManager | undefined }),
      );
      return turn.invoke(
        { task: request.task },
        {
          callbacks,
          runName: TURN_RUN_NAME,
          tags: [`thread:${request.threadId}`],
          metadata: { thread_id: request.threadId },
        },
      );
    },
    async flush() {
      if (tracer) await (await tracer).flush();
    },
  };
}
