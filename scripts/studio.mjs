#!/usr/bin/env node
// `npm run studio [-- <options>]`: the LangGraph dev server for langgraph.json, so the agent opens
// in LangGraph Studio. No browser is opened and nothing is sent to the CLI's analytics endpoint.
// Options go to `langgraphjs dev` (--port 3000, --host, --no-reload, --studio-url, ...), but for
// `--approval <mode>`, the loosest approval mode a run may ask for (default: MINI_CURSOR_APPROVAL,
// else auto-edit; a run over the API may only narrow it); the host defaults to 127.0.0.1 so the
// Studio link works in every browser. Once the API answers, the local API URL and the Studio link
// are printed.
//
// A run a killed server left "running" is marked failed before the server starts, so its thread
// takes new runs again and goes on from its last saved step (scripts/studio-stale-runs.mjs).
//
// The server stays in this script's process group, so whoever stops the group (Ctrl-C, a process
// manager, a test) stops all of it; SIGINT, SIGTERM and SIGHUP sent to this script alone are
// passed on. The dev server exits through its exit hooks, and the background processes its runs
// left are stopped then (src/studio/studio.ts).
//
// The API refuses requests from other web pages, to other host names (DNS rebinding) and with
// bodies that are not JSON (src/studio/http-guard.ts, mounted through langgraph.json's http.app),
// and an approval needs the one-time code this terminal shows for it (src/graph/studio-secret.ts).
//
// `npm run studio -- codes [--port 3000]`, in another terminal, lists the one-time codes still
// waiting (the request log scrolls them away): the server answers on a Unix socket in a folder
// only your user can enter ($XDG_RUNTIME_DIR/mini-cursor, else /tmp/mini-cursor-<uid>, mode 700).
import { spawn } from "node:child_process";
import { lstatSync, mkdirSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { failStaleRuns, staleRunLines } from "./studio-stale-runs.mjs";

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

/**
 * The folder of the codes socket: the runtime folder's (private by design), else one in /tmp named
 * for the user. Made mode 700 if missing; refused when it is a link, someone else's or open to
 * others (another user may have made it first). Returns the folder, or { problem }.
 */
function codesFolder(create) {
  const uid = process.getuid();
  const runtime = process.env.XDG_RUNTIME_DIR;
  const folder = runtime ? path.join(runtime, "mini-cursor") : path.join(os.tmpdir(), `mini-cursor-${uid}`);
  if (create) {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (err) {
      if (err.code !== "EEXIST") return { problem: `cannot make ${folder}: ${err.message}` };
    }
  }
  let st;
  try {
    st = lstatSync(folder);
  } catch {
    return { problem: `${folder} does not exist` };
  }
  if (!st.isDirectory()) return { problem: `${folder} is not a folder (a link, or a file)` };
  if (st.uid !== uid) return { problem: `${folder} belongs to another user` };
  if ((st.mode & 0o077) !== 0) return { problem: `${folder} is open to other users` };
  return { folder };
}

const codesSocket = (folder, port) => path.join(folder, `studio-${port}.sock`);

/** `args` without `long` and its value (an option of ours, not of `langgraphjs dev`). */
function withoutOption(args, long) {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === long) i++;
    else if (!args[i].startsWith(`${long}=`)) out.push(args[i]);
  }
  return out;
}

const args = process.argv.slice(2);

if (args[0] === "codes") {
  const port = optionValue(args, "--port", "-p") ?? DEFAULT_PORT;
  const found = codesFolder(false);
  const fail = (why) => {
    process.stderr.write(
      `mini-cursor studio: cannot list the approval codes of the server on port ${port}: ${why}. It must run as you, started with npm run studio${port === DEFAULT_PORT ? "" : ` -- --port ${port}`}.\n`,
    );
    process.exit(1);
  };
  if (found.problem) fail(found.problem);
  const socket = net.connect(codesSocket(found.folder, port));
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (d) => (text += d));
  socket.on("end", () => {
    process.stdout.write(text);
    process.exit(0);
  });
  socket.on("error", (err) =>
    fail(err.code === "ENOENT" || err.code === "ECONNREFUSED" ? "no such server is running" : err.message),
  );
} else {
  await serve();
}

async function serve() {
  // The server's approval mode: the loosest a run over the API may ask for (src/studio/studio.ts).
  const approval = optionValue(args, "--approval");
  const passed = withoutOption(args, "--approval");
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

  // Runs a killed server left in flight would keep their threads refusing new runs: failed here,
  // before the server loads its state, and said (scripts/studio-stale-runs.mjs).
  if (!wantsHelp) for (const line of staleRunLines(failStaleRuns(root))) process.stderr.write(`${line}\n`);

  // Where the server answers `npm run studio -- codes`; without a private folder, it only prints them.
  const codes = codesFolder(true);
  if (codes.problem && !wantsHelp)
    process.stderr.write(`mini-cursor studio: npm run studio -- codes will not work: ${codes.problem}.\n`);

  const child = spawn(process.execPath, [cli, "dev", ...passed], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      ...process.env,
      LANGGRAPH_CLI_NO_ANALYTICS: "1",
      BROWSER: "none",
      ...(approval === undefined ? {} : { MINI_CURSOR_APPROVAL: approval }),
      // The request guard (src/studio/http-guard.ts) accepts these besides loopback and Studio.
      MINI_CURSOR_STUDIO_HOST: host,
      MINI_CURSOR_STUDIO_ORIGIN: studioHost,
      ...(codes.folder ? { MINI_CURSOR_STUDIO_CODES_SOCKET: codesSocket(codes.folder, port) } : {}),
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
              (codes.folder
                ? `  Codes   npm run studio -- codes${port === DEFAULT_PORT ? "" : ` --port ${port}`} (in another terminal)\n`
                : "") +
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
}
