import { randomUUID } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { streamEvents, type ChatRequest, type ScriptStep } from "../__tests__/helpers/openai-server.js";

/**
 * The scripted OpenAI-compatible server of the tests, as the end-to-end benchmark needs it: zero
 * latency, and every request timed from its arrival to the last byte handed to the socket, so the
 * client's share of a step is the wall time minus this. The SSE events are the tests' own
 * (`streamEvents`), written one by one as OpenAI streams them. Any other POST (another agent's
 * `/v1/responses`, say) is recorded as a model request too and answered 404, which is all a
 * launch-time measurement needs from it.
 */

export interface TimedRequest {
  path: string;
  /** performance.now() when the request's headers arrived. */
  arrivedAt: number;
  /** performance.now() when the answer was fully written. */
  finishedAt: number;
  /** Bytes of the request body, and of its `messages` array as JSON. */
  bodyBytes: number;
  messagesBytes: number;
}

export interface BenchServer {
  url: string;
  requests: TimedRequest[];
  close(): Promise<void>;
}

export type BenchScript = (request: ChatRequest, index: number) => ScriptStep;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (b: Buffer) => parts.push(b));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function writeEvent(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => res.write(data, () => resolve()));
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  script: BenchScript,
  requests: TimedRequest[],
  index: number,
): Promise<void> {
  const arrivedAt = performance.now();
  const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
  const body = req.method === "POST" ? await readBody(req) : "";
  const record = (messagesBytes: number) =>
    res.once("finish", () =>
      requests.push({
        path,
        arrivedAt,
        finishedAt: performance.now(),
        bodyBytes: Buffer.byteLength(body),
        messagesBytes,
      }),
    );
  if (req.method !== "POST") {
    res.writeHead(404).end();
    return;
  }
  if (!path.endsWith("/chat/completions")) {
    record(0);
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not served by the bench"}}');
    return;
  }
  const request = JSON.parse(body) as ChatRequest;
  record(Buffer.byteLength(JSON.stringify(request.messages)));
  const step = script(request, index);
  const events = streamEvents(
    step,
    request.model,
    `chatcmpl-${randomUUID()}`,
    Boolean(request.stream_options?.include_usage),
  );
  if (!request.stream) throw new Error("the bench server answers streamed requests only");
  // A model's time to its first token, when the script gives one: the client waits, as it would on a real provider.
  if (step.delayMs) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (const event of events) await writeEvent(res, `data: ${event}\n\n`);
  res.end();
}

export async function startBenchServer(script: BenchScript): Promise<BenchServer> {
  const requests: TimedRequest[] = [];
  const sockets = new Set<Socket>();
  let chats = 0;
  const server = http.createServer((req, res) => {
    const index = req.method === "POST" && (req.url ?? "").includes("/chat/completions") ? chats++ : -1;
    answer(req, res, script, requests, index).catch((err: unknown) => {
      if (!res.headersSent)
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: String(err) } }));
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
