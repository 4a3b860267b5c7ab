import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for tests of the real ChatOpenAI over HTTP.
 *
 * Serves `POST /v1/chat/completions` (plain JSON, or SSE when the request says `stream: true`)
 * and `GET /v1/models`. Every chat request consumes the next step of the script, faults
 * included, so `[{ status: 429, retryAfter: 0 }, { content: "ok" }]` tests one retry. When the
 * script runs out the server answers 500 "script exhausted", so a run can never hang on it.
 */

export interface ScriptToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent as is (so it may be malformed JSON). */
  args: object | string;
  /** Defaults to a fresh `call_...` id. */
  id?: string;
}

export interface ScriptStep {
  content?: string;
  toolCalls?: ScriptToolCall[];
  /** An HTTP error instead of a completion (429, 500, 401, 404...). */
  status?: number;
  /** Seconds, sent as the `retry-after` header (with a fault status). */
  retryAfter?: number;
  /** The `error` object of a fault's body; a default message names the status. */
  error?: { message: string; type?: string; code?: string };
  /** SSE only: destroy the socket (no clean end, no [DONE]) after this many `data:` events (0: right after the status line and headers). */
  cutAfterChunks?: number;
  /** Read the request and close the connection without a byte of answer (no status line). */
  hangUp?: boolean;
  /** SSE only: end the response cleanly, but early (no finish_reason, no [DONE]), after this many events. */
  endAfterChunks?: number;
  /** SSE only: send this many events and then go quiet, keeping the connection open. */
  stallAfterChunks?: number;
  /** Defaults to "tool_calls" when there are tool calls, "stop" otherwise. */
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Wait this long before answering (for timeouts). */
  delayMs?: number;
  /** Read the request and never answer: no status line, no byte, the connection left open. */
  silent?: boolean;
  /**
   * While the request's tool schemas carry this JSON-schema keyword, answer 400 as Gemini's
   * OpenAI-compatible gateways do (`Invalid JSON payload received. Unknown name "additionalProperties"`);
   * without it, answer as the rest of the step says.
   */
  rejectSchemaKeyword?: string;
  /**
   * A provider's answer replayed byte for byte instead of one built from the fields above:
   * status (default 200), headers (default content-type text/event-stream), and the body. An
   * array body is written piece by piece, each piece flushed before the next (a stream).
   */
  raw?: RawAnswer;
}

export interface RawAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string | string[];
}

/** The parsed JSON body of a chat completions request. */
export interface ChatRequest {
  model: string;
  messages: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
    name?: string;
  }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  [key: string]: unknown;
}

/**
 * A fixed sequence, one step per request in arrival order; or a function of the request, which
 * may answer later (a promise) to hold a reply until a condition holds, e.g. until a parallel
 * request has arrived too.
 */
export type Script = ScriptStep[] | ((request: ChatRequest, index: number) => ScriptStep | Promise<ScriptStep>);

export interface OpenAIServer {
  /** Base URL for the OpenAI SDK, e.g. `http://127.0.0.1:43210/v1`. */
  url: string;
  port: number;
  /** Bodies of the chat completions requests, in arrival order (faulted ones included). */
  requests: ChatRequest[];
  close(): Promise<void>;
}

export interface OpenAIServerOptions {
  /** Called with every chat completions body as it arrives (the CLI entry logs them). */
  onRequest?: (request: ChatRequest, index: number) => void;
  /** Model ids `GET /v1/models` lists. */
  models?: string[];
}

export const SCRIPT_EXHAUSTED = "script exhausted";

/**
 * The text of a request's first user message: which conversation it belongs to (the parent's
 * request, or a sub-agent's prompt, which is a sub-agent's whole first message).
 */
export function conversationOf(request: ChatRequest): string {
  const first = request.messages.find((m) => m.role === "user");
  return typeof first?.content === "string" ? first.content : JSON.stringify(first?.content);
}

/**
 * A script per conversation (keyed by conversationOf, or `keyOf`), each played in order whatever
 * order the conversations' requests arrive in, as parallel sub-agents' do. A request of a
 * conversation with no step left is answered with text saying so.
 */
export function routedScript(
  scripts: Record<string, Array<ScriptStep | (() => ScriptStep | Promise<ScriptStep>)>>,
  keyOf: (request: ChatRequest) => string = conversationOf,
): (request: ChatRequest) => ScriptStep | Promise<ScriptStep> {
  const played = new Map<string, number>();
  return (request) => {
    const key = keyOf(request);
    const index = played.get(key) ?? 0;
    played.set(key, index + 1);
    const step = scripts[key]?.[index] ?? { content: `no script for ${key} turn ${index + 1}` };
    return typeof step === "function" ? step() : step;
  };
}
/** Largest argument fragment per SSE chunk, so any non-trivial arguments span several chunks. */
const ARGS_FRAGMENT = 7;

let callCounter = 0;
const freshCallId = () => `call_${++callCounter}_${randomUUID().slice(0, 8)}`;

/** Text as OpenAI streams it: word pieces, each with its leading space. */
export function splitText(text: string): string[] {
  const pieces = text.match(/\s*\S+|\s+$/g) ?? [];
  return pieces.length > 0 ? pieces : [text];
}

/** Arguments split into small fragments (never cut inside a surrogate pair). */
export function splitArgs(args: string): string[] {
  const chars = Array.from(args);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += ARGS_FRAGMENT) out.push(chars.slice(i, i + ARGS_FRAGMENT).join(""));
  return out;
}

function argsString(args: object | string): string {
  return typeof args === "string" ? args : JSON.stringify(args);
}

function usageOf(step: ScriptStep) {
  const u = step.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };
}

function finishReasonOf(step: ScriptStep): string {
  return step.finishReason ?? (step.toolCalls?.length ? "tool_calls" : "stop");
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendFault(res: ServerResponse, step: ScriptStep): void {
  const status = step.status!;
  const headers: Record<string, string> = {};
  if (step.retryAfter !== undefined) headers["retry-after"] = String(step.retryAfter);
  const error = step.error ?? { message: `scripted fault: HTTP ${status}` };
  sendJson(
    res,
    status,
    { error: { type: error.type ?? "server_error", code: error.code ?? null, param: null, message: error.message } },
    headers,
  );
}

function completionBody(step: ScriptStep, model: string, id: string) {
  const calls = (step.toolCalls ?? []).map((c) => ({
    id: c.id ?? freshCallId(),
    type: "function",
    function: { name: c.name, arguments: argsString(c.args) },
  }));
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: step.content ?? (calls.length ? null : ""),
          ...(calls.length ? { tool_calls: calls } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: finishReasonOf(step),
      },
    ],
    usage: usageOf(step),
  };
}

/** The `data:` payloads of a streamed completion, in the order OpenAI sends them. */
export function streamEvents(step: ScriptStep, model: string, id: string, includeUsage: boolean): string[] {
  const created = Math.floor(Date.now() / 1000);
  const extra = includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null = null) =>
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      system_fingerprint: "fp_scripted",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...extra,
    });
  const events = [chunk({ role: "assistant", content: "", refusal: null })];
  if (step.content) for (const piece of splitText(step.content)) events.push(chunk({ content: piece }));
  (step.toolCalls ?? []).forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [
          { index, id: call.id ?? freshCallId(), type: "function", function: { name: call.name, arguments: "" } },
        ],
      }),
    );
    for (const fragment of splitArgs(argsString(call.args))) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });
  events.push(chunk({}, finishReasonOf(step)));
  if (includeUsage) {
    events.push(
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        system_fingerprint: "fp_scripted",
        choices: [],
        usage: usageOf(step),
      }),
    );
  }
  events.push("[DONE]");
  return events;
}

function write(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    res.write(data, () => resolve());
  });
}

async function sendStream(res: ServerResponse, step: ScriptStep, request: ChatRequest, id: string): Promise<void> {
  const events = streamEvents(step, request.model, id, Boolean(request.stream_options?.include_usage));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  // Node holds the headers back until the first write; a stream that stalls or is cut at once still sends them.
  if (step.stallAfterChunks === 0 || step.cutAfterChunks === 0) res.flushHeaders();
  for (let i = 0; i < events.length; i++) {
    if (res.destroyed) return;
    if (step.cutAfterChunks !== undefined && i >= step.cutAfterChunks) {
      res.socket?.destroy();
      return;
    }
    if (step.endAfterChunks !== undefined && i >= step.endAfterChunks) break;
    if (step.stallAfterChunks !== undefined && i >= step.stallAfterChunks) return;
    // Each event is flushed before the next, so the client sees them as separate reads.
    await write(res, `data: ${events[i]}\n\n`);
  }
  res.end();
}

async function sendRaw(res: ServerResponse, raw: RawAnswer): Promise<void> {
  res.writeHead(raw.status ?? 200, { "content-type": "text/event-stream", ...(raw.headers ?? {}) });
  for (const piece of typeof raw.body === "string" ? [raw.body] : raw.body) {
    if (res.destroyed) return;
    await write(res, piece);
  }
  res.end();
}

/** SSE framing for raw answers: each payload as `data: …` and a blank line, as OpenAI frames them. */
export function sse(...payloads: Array<string | object>): string[] {
  return payloads.map((p) => `data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`);
}

function schemasCarry(request: ChatRequest, keyword: string): boolean {
  return JSON.stringify((request.tools ?? []).map((t) => t.function.parameters ?? null)).includes(
    JSON.stringify(keyword),
  );
}

/** Gemini's 400 for a schema keyword outside its subset, as its OpenAI-compatible endpoint sends it. */
export function geminiSchemaFault(keyword: string): RawAnswer {
  const message = `Invalid JSON payload received. Unknown name "${keyword}" at 'tools[0].function_declarations[0].parameters': Cannot find field.`;
  return {
    status: 400,
    headers: { "content-type": "application/json" },
    body: JSON.stringify([{ error: { code: 400, message, status: "INVALID_ARGUMENT" } }]),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (b: Buffer) => parts.push(b));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startOpenAIServer(script: Script, options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const requests: ChatRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const models = options.models ?? ["gpt-4o-mini", "scripted-model"];

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const nextStep = async (request: ChatRequest, index: number): Promise<ScriptStep | undefined> =>
    typeof script === "function" ? script(request, index) : script[index];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const route = url.pathname.replace(/\/+$/, "");
    if (req.method === "GET" && route === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted" })),
      });
      return;
    }
    if (req.method !== "POST" || route !== "/v1/chat/completions") {
      sendJson(res, 404, {
        error: {
          type: "invalid_request_error",
          code: "not_found",
          param: null,
          message: `No route ${req.method} ${url.pathname}`,
        },
      });
      return;
    }
    let request: ChatRequest;
    try {
      request = JSON.parse(await readBody(req)) as ChatRequest;
    } catch (err) {
      sendJson(res, 400, {
        error: { type: "invalid_request_error", code: null, param: null, message: `Body is not JSON: ${String(err)}` },
      });
      return;
    }
    const index = requests.length;
    requests.push(request);
    options.onRequest?.(request, index);
    let step: ScriptStep | undefined;
    try {
      step = await nextStep(request, index);
    } catch (err) {
      sendJson(res, 500, {
        error: { type: "server_error", code: null, param: null, message: `script function threw: ${String(err)}` },
      });
      return;
    }
    if (!step) {
      const message = `${SCRIPT_EXHAUSTED}: request ${index + 1} has no step in the script`;
      sendJson(res, 500, { error: { type: "server_error", code: "script_exhausted", param: null, message } });
      return;
    }
    if (step.silent) return;
    if (step.hangUp) {
      res.socket?.destroy();
      return;
    }
    if (step.rejectSchemaKeyword && schemasCarry(request, step.rejectSchemaKeyword))
      return sendRaw(res, geminiSchemaFault(step.rejectSchemaKeyword));
    if (step.delayMs) await delay(step.delayMs);
    if (res.destroyed) return;
    if (step.raw) return sendRaw(res, step.raw);
    if (step.status !== undefined && step.status !== 200) return sendFault(res, step);
    const id = `chatcmpl-${randomUUID()}`;
    if (request.stream) await sendStream(res, step, request, id);
    else sendJson(res, 200, completionBody(step, request.model, id));
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { type: "server_error", code: null, param: null, message: String(err) } });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A base URL on 127.0.0.1 where nothing listens (a port taken and released). */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TSX = path.resolve(HERE, "../../node_modules/.bin/tsx");
const MAIN = path.join(HERE, "openai-server-main.ts");

export interface OpenAIServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Closes the server's stdin (it exits on that) and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * The same server as a separate process (openai-server-main.ts through tsx), for tests that
 * want it outside the Jest process. `scriptPath` holds a JSON ScriptStep array; chat request
 * bodies are appended to `logPath` as JSON lines. A test in the Jest process can equally start
 * `startOpenAIServer` and point a CLI subprocess at its url.
 */
export function startOpenAIServerProcess(
  scriptPath: string,
  logPath?: string,
  timeoutMs = 15_000,
): Promise<OpenAIServerProcess> {
  const child = spawn(TSX, [MAIN, scriptPath, ...(logPath ? [logPath] : [])], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin!.end();
      await exited;
    }
  };
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`openai-server-main did not start within ${timeoutMs} ms\n${err}`));
    }, timeoutMs);
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /^LISTENING (\d+)$/m.exec(out);
      if (!match) return;
      clearTimeout(timer);
      const port = Number(match[1]);
      resolve({ url: `http://127.0.0.1:${port}/v1`, port, child, close });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`openai-server-main exited with ${code} before listening\n${err}`));
    });
  });
}
