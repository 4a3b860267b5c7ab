#!/usr/bin/env node
// `npm run studio [-- <options>]`: the LangGraph dev server for langgraph.json, so the agent opens
// in LangGraph Studio. No browser is opened and nothing is sent to the CLI's analytics endpoint.
// Options go to `langgraphjs dev` (--port 3000, --host, --no-reload, --studio-url, ...); the host
// defaults to 127.0.0.1 so the Studio link works in every browser. Once the API answers, the
// local API URL and the Studio link are printed.
//
// The server stays in this script's process group, so whoever stops the group (Ctrl-C, a process
// manager, a test) stops all of it; SIGINT, SIGTERM and SIGHUP sent to this script alone are
// passed on. The dev server exits through its exit hooks, and the background processes its runs
// left are stopped then (src/studio/studio.ts).
//
// The API refuses requests from other web pages, to other host names (DNS rebinding) and with
// bodies that are not JSON (src/studio/http-guard.ts, mounted through langgraph.json's http.app),
// and an approval needs the one-time code this terminal shows for it (src/graph/studio-secret.ts).
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = path.join(root, "node_modules", "@langchain", "langgraph-cli", "dist", "cli", "cli.mjs");
const DEFAULT_PORT = "2024";
const DEFAULT_HOST = "127.0.0.1";
const DEFAULT_STUDIO = "https://smith.langchain.com";
const READY_POLL_MS = 250;

/** The last value given for an option: `--port 3000`, `--port=3000` or `-p 3000`. */
function optionValue(args, long, short) {
  let value;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    if (arg === long || (short && arg === short)) value = args[++i];
    else if (arg.startsWith(`${long}=`)) value = arg.slice(long.length + 1);
  }
  return value;
}

const args = process.argv.slice(2);
const passed = [...args];
const port = optionValue(args, "--port", "-p") ?? DEFAULT_PORT;
let host = optionValue(args, "--host", "-h");
if (host === undefined) {
  host = DEFAULT_HOST;
  passed.push("--host", host);
}
if (!args.includes("--no-browser")) passed.push("--no-browser");
const wantsHelp = args.includes("--help");

const localHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
const apiUrl = `http://${localHost.includes(":") ? `[${localHost}]` : localHost}:${port}`;
const studioHost = (optionValue(args, "--studio-url") ?? DEFAULT_STUDIO).replace(/\/+$/, "");
const studioUrl = `${studioHost}/studio/?baseUrl=${apiUrl}`;

/** Whether something already accepts connections on the port. */
function portTaken() {
  return new Promise((resolve) => {
    const socket = net.connect({ host: localHost, port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

if (!wantsHelp && (await portTaken())) {
  process.stderr.write(
    `mini-cursor studio: something is already listening on ${apiUrl}; pass another port: npm run studio -- --port 3000\n`,
  );
  process.exit(1);
}

const child = spawn(process.execPath, [cli, "dev", ...passed], {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
  env: {
    ...process.env,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    BROWSER: "none",
    // The request guard (src/studio/http-guard.ts) accepts these besides loopback and Studio.
    MINI_CURSOR_STUDIO_HOST: host,
    MINI_CURSOR_STUDIO_ORIGIN: studioHost,
    // Studio's panels need the graph's schemas. The server reads them from the zod state at run
    // time (src/graph/state.ts); should that ever fail, it type-checks the graph instead, which on
    // a slow machine takes longer than its default of 30 s.
    LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: process.env.LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS || "180000",
  },
});
let stopping = false;

// The dev server shuts down cleanly (stopping its own children) on SIGINT and SIGTERM; a hangup
// would kill it outright and leave them, so it is passed on as SIGTERM. This exits when it has.
for (const [signal, passOn] of [
  ["SIGINT", "SIGINT"],
  ["SIGTERM", "SIGTERM"],
  ["SIGHUP", "SIGTERM"],
]) {
  process.on(signal, () => {
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) child.kill(passOn);
  });
}

child.once("exit", (code, signal) => {
  // A stop we were asked for is a clean end; otherwise the server's own status (a startup error).
  process.exit(stopping ? 0 : (code ?? (signal ? 1 : 0)));
});

async function announceWhenReady() {
  while (!stopping && child.exitCode === null && child.signalCode === null) {
    try {
      const res = await fetch(`${apiUrl}/ok`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) {
        process.stdout.write(
          `\nmini-cursor is ready for LangGraph Studio (graph "agent")\n` +
            `  API     ${apiUrl}\n` +
            `  Studio  ${studioUrl}\n` +
            `  Stop    Ctrl-C\n\n`,
        );
        return;
      }
    } catch {
      // Not up yet.
    }
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
}
if (!wantsHelp) void announceWhenReady();
