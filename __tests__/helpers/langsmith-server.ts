import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A LangSmith-compatible endpoint on 127.0.0.1 that records what a traced run posts. `/info`
 * turns off the multipart endpoint, so the SDK sends plain JSON: `POST /runs/batch` with
 * `{ post, patch }`, or `POST /runs` and `PATCH /runs/:id`. Every request's raw body is kept, so
 * a test can look for secrets in everything that was sent, whatever the route.
 */

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A run as it ends up after its creation and every update were applied. */
export interface TracedRun {
  id: string;
  name: string;
  run_type: string;
  parent_run_id?: string;
  trace_id?: string;
  tags?: string[];
  extra?: { metadata?: Record<string, unknown> };
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  error?: string;
  end_time?: unknown;
  session_name?: string;
}

export interface LangSmithServer {
  url: string;
  requests: RecordedRequest[];
  /** Every run posted, merged with its updates, in the order they were created. */
  runs(): TracedRun[];
  close(): Promise<void>;
}

export interface LangSmithServerOptions {
  /** Answer every request 401, as LangSmith does to a key it does not know. */
  rejectKey?: boolean;
}

export async function startLangSmithServer(options: LangSmithServerOptions = {}): Promise<LangSmithServer> {
  const requests: RecordedRequest[] = [];
  const runs = new Map<string, TracedRun>();
  const apply = (run: Partial<TracedRun> & { id?: string }) => {
    if (!run.id) return;
    runs.set(run.id, { ...(runs.get(run.id) ?? ({} as TracedRun)), ...run } as TracedRun);
  };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const route = (req.url ?? "").split("?")[0]!;
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      try {
        if (options.rejectKey) return json(401, { detail: "Invalid token" });
        if (req.method === "GET" && route === "/info")
          return json(200, { version: "0.0.0-test", batch_ingest_config: { use_multipart_endpoint: false } });
        if (req.method === "POST" && route === "/runs/batch") {
          const { post = [], patch = [] } = JSON.parse(body) as { post?: TracedRun[]; patch?: TracedRun[] };
          for (const run of [...post, ...patch]) apply(run);
          return json(200, {});
        }
        if (req.method === "POST" && route === "/runs") {
          apply(JSON.parse(body) as TracedRun);
          return json(200, {});
        }
        const patchMatch = /^\/runs\/([^/]+)$/.exec(route);
        if (req.method === "PATCH" && patchMatch) {
          apply({ ...(JSON.parse(body) as TracedRun), id: patchMatch[1]! });
          return json(200, {});
        }
        return json(404, { detail: "not served by the test endpoint" });
      } catch (err) {
        return json(400, { detail: (err as Error).message });
      }
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    runs: () => [...runs.values()],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
