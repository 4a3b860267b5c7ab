// A small MCP server written with the official SDK, started by the tests (plain JavaScript,
// so it starts in a fraction of a second without a compiler).
//
//   node mcp-test-server.mjs stdio [--name N] [--crash-at-start] [--hang-at-start] [--slow-start MS]
//                                  [--ignore-sigterm] [--pid-file F] [--extra-tool T]...
//   node mcp-test-server.mjs http  [--name N]   (prints "listening <url>" on stdout)
//
// Tools: echo {text} -> "<name> echo: <text>"; add {a, b} (readOnlyHint) -> the sum;
// picture -> a text and a PNG image; fail -> an error result; big {chars} -> that many "x";
// sleep {ms} -> answers after ms; crash -> the process exits with code 3 mid-call;
// with --content-tools also: everything -> one block of every content type the spec defines;
// embedded {binary} -> one embedded resource; search {query, limit, mode?} -> strict arguments;
// slow {steps, every?} -> progress notifications (every ms apart) when the client sent a progressToken;
// limited {limit} -> a limit outside 1..100 is refused server-side with JSON-RPC -32602 (invalid params);
// with --file-tools also: append {path, text, waitFor?} (and append_pair {path, target, text, waitFor?}) -> reads the file, waits until waitFor
// exists when given (at most 30 s), then writes what it read plus the text as a line.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

const argv = process.argv.slice(2);
const mode = argv[0];
const option = (flag) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
const name = option("--name") ?? "test";
// Before the SDK loads (a second on a busy machine), so a test sees the process at once.
if (option("--pid-file")) writeFileSync(option("--pid-file"), String(process.pid));
// A server whose shutdown would hang: only SIGKILL ends it.
if (argv.includes("--ignore-sigterm")) process.on("SIGTERM", () => undefined);

const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { z } = await import("zod");
const { McpError, ErrorCode } = await import("@modelcontextprotocol/sdk/types.js");

const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function buildServer() {
  const server = new McpServer({ name, version: "1.0.0" });
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  server.registerTool(
    "echo",
    {
      description: `Echoes the text back (server ${name}).`,
      inputSchema: { text: z.string().describe("What to echo") },
    },
    async ({ text: t }) => text(`${name} echo: ${t}`),
  );
  server.registerTool(
    "add",
    {
      description: "Adds two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => text(String(a + b)),
  );
  server.registerTool("picture", { description: "Returns a picture." }, async () => ({
    content: [
      { type: "text", text: "a red dot" },
      { type: "image", data: PNG_1x1, mimeType: "image/png" },
    ],
  }));
  server.registerTool("fail", { description: "Always fails." }, async () => ({
    isError: true,
    content: [{ type: "text", text: "the disk is on fire" }],
  }));
  server.registerTool(
    "big",
    { description: "Returns many characters.", inputSchema: { chars: z.number().int() } },
    async ({ chars }) => text("x".repeat(chars)),
  );
  server.registerTool(
    "sleep",
    { description: "Answers after a while.", inputSchema: { ms: z.number().int() } },
    async ({ ms }) => {
      // Tells a test the call has arrived (a SIGTERM test waits for it).
      if (option("--pid-file")) writeFileSync(`${option("--pid-file")}.sleeping`, "");
      await new Promise((r) => setTimeout(r, ms));
      return text(`slept ${ms} ms`);
    },
  );
  if (argv.includes("--content-tools")) registerContentTools(server, text);
  if (argv.includes("--file-tools")) registerFileTools(server, text);
  // --extra-tool N (repeatable): one more echo tool under that exact name (names that collide, or carry control codes).
  argv.forEach((arg, i) => {
    if (arg === "--extra-tool")
      server.registerTool(
        argv[i + 1],
        { description: "Echoes (extra).", inputSchema: { text: z.string() } },
        async ({ text: t }) => text(`extra: ${t}`),
      );
  });
  server.registerTool("crash", { description: "Makes the server exit." }, async () => {
    process.stderr.write("fatal: crash tool called\n");
    process.exit(3);
  });
  return server;
}

/** Longest an append waits for its waitFor file. */
const WAIT_FOR_MS = 30_000;

/**
 * With --file-tools: a read-modify-write of a file in the server's folder (the workspace), slow
 * on purpose when waitFor is given, so two calls on one path that overlap lose a line.
 */
function registerFileTools(server, text) {
  server.registerTool(
    "append",
    {
      description: "Appends a line to a file.",
      inputSchema: { path: z.string(), text: z.string(), waitFor: z.string().optional() },
    },
    async ({ path: file, text: line, waitFor }) => {
      const before = existsSync(file) ? readFileSync(file, "utf8") : "";
      const deadline = Date.now() + WAIT_FOR_MS;
      while (waitFor && !existsSync(waitFor)) {
        if (Date.now() > deadline)
          return { isError: true, content: [{ type: "text", text: `${waitFor} never appeared` }] };
        await new Promise((r) => setTimeout(r, 20));
      }
      writeFileSync(file, `${before}${line}\n`);
      return text(`appended to ${file}`);
    },
  );
  // The same line to two files, the second named `target`: read both first, write both last.
  server.registerTool(
    "append_pair",
    {
      description: "Appends a line to a file and to a target file.",
      inputSchema: { path: z.string(), target: z.string(), text: z.string(), waitFor: z.string().optional() },
    },
    async ({ path: file, target, text: line, waitFor }) => {
      const read = (f) => (existsSync(f) ? readFileSync(f, "utf8") : "");
      const [before, beforeTarget] = [read(file), read(target)];
      const deadline = Date.now() + WAIT_FOR_MS;
      while (waitFor && !existsSync(waitFor)) {
        if (Date.now() > deadline)
          return { isError: true, content: [{ type: "text", text: `${waitFor} never appeared` }] };
        await new Promise((r) => setTimeout(r, 20));
      }
      writeFileSync(file, `${before}${line}\n`);
      writeFileSync(target, `${beforeTarget}${line}\n`);
      return text(`appended to ${file} and ${target}`);
    },
  );
}

/** With --content-tools: every content type of the spec, strict arguments, progress. */
function registerContentTools(server, text) {
  server.registerTool("everything", { description: "Returns one block of every content type." }, async () => ({
    content: [
      { type: "text", text: "plain text" },
      { type: "image", data: PNG_1x1, mimeType: "image/png" },
      { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" },
      {
        type: "resource_link",
        uri: "file:///docs/guide.md",
        name: "guide.md",
        mimeType: "text/markdown",
        description: "The user guide",
      },
      { type: "resource", resource: { uri: "test://notes/1", mimeType: "text/plain", text: "note one\nline two" } },
      {
        type: "resource",
        resource: { uri: "test://blobs/1", mimeType: "application/octet-stream", blob: "AAECAwQFBgc=" },
      },
    ],
  }));
  server.registerTool(
    "embedded",
    { description: "Returns only an embedded resource.", inputSchema: { binary: z.boolean() } },
    async ({ binary }) => ({
      content: [
        binary
          ? { type: "resource", resource: { uri: "test://data.bin", mimeType: "application/zip", blob: "UEsDBAo=" } }
          : { type: "resource", resource: { uri: "test://readme.txt", mimeType: "text/plain", text: "read me" } },
      ],
    }),
  );
  server.registerTool(
    "search",
    {
      description: "Searches (strict arguments).",
      inputSchema: {
        query: z.string().describe("What to look for"),
        limit: z.number().int().describe("How many results"),
        mode: z.enum(["fast", "full"]).optional(),
      },
    },
    async ({ query, limit }) => text(`${limit} results for ${query}`),
  );
  // Reports progress when the client sent a progressToken, then answers.
  server.registerTool(
    "slow",
    {
      description: "Works in steps, reporting progress.",
      inputSchema: { steps: z.number().int(), every: z.number().int().optional() },
    },
    async ({ steps, every = 20 }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined)
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        await new Promise((r) => setTimeout(r, every));
      }
      return text(token === undefined ? "done without a progress token" : `done in ${steps} steps`);
    },
  );
  server.registerTool(
    "limited",
    {
      description: "Returns up to limit results (1 to 100, checked by the server).",
      inputSchema: { limit: z.number().int().describe("How many results, 1 to 100") },
    },
    async ({ limit }) => text(`${limit} results`),
  );
  rejectServerSide(server);
}

/**
 * Checks `limited`'s arguments before the SDK's own handler sees them and answers a JSON-RPC
 * error, as servers written without the SDK's high-level API do (McpServer would turn it into
 * an isError result).
 */
function rejectServerSide(server) {
  const handlers = server.server._requestHandlers;
  const inner = handlers.get("tools/call");
  handlers.set("tools/call", async (request, extra) => {
    const limit = request.params?.arguments?.limit;
    if (request.params?.name === "limited" && !(Number.isInteger(limit) && limit >= 1 && limit <= 100))
      throw new McpError(
        ErrorCode.InvalidParams,
        `"limit" must be an integer from 1 to 100, got ${JSON.stringify(limit)}`,
      );
    return inner(request, extra);
  });
}

if (mode === "stdio") {
  if (argv.includes("--crash-at-start")) {
    process.stderr.write("cannot start: TEST_API_TOKEN is not set\n");
    process.exit(2);
  }
  if (argv.includes("--hang-at-start")) {
    // Never answers initialize; stays alive until killed.
    setInterval(() => undefined, 1_000);
  } else {
    // --slow-start MS: answers initialize only after MS (a server that takes long to start).
    if (option("--slow-start")) await new Promise((r) => setTimeout(r, Number(option("--slow-start"))));
    await buildServer().connect(new StdioServerTransport());
  }
} else if (mode === "http") {
  // Stateless streamable HTTP: a fresh server and transport per request.
  const http = createServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening http://127.0.0.1:${http.address().port}/mcp\n`);
  });
} else {
  process.stderr.write("usage: mcp-test-server.mjs stdio|http\n");
  process.exit(2);
}
