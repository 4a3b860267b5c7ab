/**
 * End-to-end figures: the real CLI (or Codex CLI, or the Studio dev server) as a subprocess
 * against the zero-latency scripted server of bench-server.ts.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { clientMsPerStep } from "./bench-goals.js";
import { startBenchServer, type BenchScript, type TimedRequest } from "./bench-server.js";
import { cleanEnv, ROOT } from "./bench-system.js";

/** Generous: a 200-step run on a busy 2-core machine. */
const RUN_DEADLINE_MS = 300_000;
/** How long the Studio dev server may take to answer the schema request (it type-checks). */
const STUDIO_DEADLINE_MS = 240_000;
const POLL_MS = 25;
/** A launch run ends by itself within a second or two; one that lingers is stopped here. */
const LAUNCH_DEADLINE_MS = 30_000;

export interface Launcher {
  label: string;
  cmd: string;
  args: string[];
  /** Arguments after the launcher's own for one task in a workspace. */
  task(workspace: string, task: string): string[];
  env?: NodeJS.ProcessEnv;
  /** Where it is started: `npm start` needs the project; the others start in the workspace. */
  inProject?: boolean;
  /** Codex CLI: gets a CODEX_HOME whose config points its provider at the bench server. */
  codex?: boolean;
}

const miniCursorTask = (workspace: string, task: string) => ["--workspace", workspace, "--json", task];

/** `npm start`, the installed `mini-cursor` command (its bin, scripts/start.mjs), and the bundle alone. */
export const LAUNCHERS = {
  npmStart: {
    label: "npm start",
    cmd: "npm",
    args: ["start", "--silent", "--"],
    task: miniCursorTask,
    inProject: true,
  },
  bin: {
    label: "mini-cursor (bin: scripts/start.mjs)",
    cmd: process.execPath,
    args: [path.join(ROOT, "scripts", "start.mjs")],
    task: miniCursorTask,
  },
  bundle: {
    label: "node dist/cli.bundle.cjs",
    cmd: process.execPath,
    args: [path.join(ROOT, "dist", "cli.bundle.cjs")],
    task: miniCursorTask,
  },
} satisfies Record<string, Launcher>;

/**
 * Codex CLI (`codex exec`) with a config whose provider is the bench server. It speaks the
 * Responses API, which the bench server answers 404: the first request is all that is timed.
 */
export function codexLauncher(bin: string): Launcher {
  return {
    label: "Codex CLI (codex exec)",
    cmd: bin,
    args: ["exec", "--skip-git-repo-check"],
    task: (workspace, task) => ["--cd", workspace, task],
    env: { BENCH_CODEX_KEY: "bench" },
    codex: true,
  };
}

const codexHome = path.join(os.tmpdir(), `mini-cursor-bench-codex-home-${process.pid}`);
process.once("exit", () => rmSync(codexHome, { recursive: true, force: true }));

function writeCodexConfig(home: string, baseUrl: string): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(
    path.join(home, "config.toml"),
    [
      'model = "gpt-5-mini"',
      'model_provider = "bench"',
      "[model_providers.bench]",
      'name = "bench"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      'env_key = "BENCH_CODEX_KEY"',
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "",
    ].join("\n"),
  );
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command in its own process group to its end; past the deadline the group is killed and
 * the run fails, or, with `stopAtDeadline`, ends as if it had exited.
 */
function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd = ROOT,
  deadlineMs = RUN_DEADLINE_MS,
  stopAtDeadline = false,
): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Gone already.
      }
      if (stopAtDeadline) resolve({ code: null, stdout, stderr });
      else reject(new Error(`${cmd} ${args.join(" ")} did not finish within ${deadlineMs} ms\n${stderr.slice(-2000)}`));
    }, deadlineMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Milliseconds from spawning a launcher to the first model request the server receives. */
export async function launchToFirstRequest(launcher: Launcher): Promise<number> {
  const server = await startBenchServer(() => ({ content: "hello" }));
  const workspace = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-launch-"));
  // One CODEX_HOME for all runs, as a user who has run Codex before has: a fresh one would add
  // its first-run setup to every launch. Only the provider's URL changes between runs.
  const home = codexHome;
  if (launcher.codex) writeCodexConfig(home, server.url);
  try {
    const env = cleanEnv({
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "bench",
      ...launcher.env,
      ...(launcher.codex ? { CODEX_HOME: home } : {}),
    });
    const started = performance.now();
    const args = [...launcher.args, ...launcher.task(workspace, "say hello")];
    // Only the first request is timed: a launcher that lingers after it (retrying, say) is stopped.
    const exit = await run(launcher.cmd, args, env, launcher.inProject ? ROOT : workspace, LAUNCH_DEADLINE_MS, true);
    const first = server.requests.reduce((min, r) => Math.min(min, r.arrivedAt), Infinity);
    if (first === Infinity)
      throw new Error(`${launcher.label} sent no model request (exit ${exit.code})\n${exit.stderr.slice(-2000)}`);
    return first - started;
  } finally {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * npm's own overhead, which `npm start` adds in front of the bin: launch to exit of
 * `npm run env` (npm's built-in script, which runs `env` through the shell) minus that of
 * `sh -c env` itself. Both in the project, as `npm start` is.
 */
export async function npmOwnOverhead(): Promise<{ npm: number; direct: number }> {
  const env = cleanEnv();
  const time = async (cmd: string, args: string[]) => {
    const started = performance.now();
    const exit = await run(cmd, args, env, ROOT, LAUNCH_DEADLINE_MS);
    if (exit.code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${exit.code}\n${exit.stderr.slice(-2000)}`);
    return performance.now() - started;
  };
  return { npm: await time("npm", ["run", "--silent", "env"]), direct: await time("sh", ["-c", "env"]) };
}

/** Two small files the steps read in turn (the loop guard stops identical calls in a row). */
const READ_FILES = ["notes-a.txt", "notes-b.txt"];
const STEP_TEXT = "Reading the next file.";

/** `steps` model turns: each but the last reads one file, the last answers. */
export function oneReadScript(steps: number): BenchScript {
  return (_request, index) =>
    index < steps - 1
      ? {
          content: STEP_TEXT,
          toolCalls: [{ name: "read_file", args: { filePath: READ_FILES[index % READ_FILES.length]! } }],
        }
      : { content: "All done." };
}

export interface StepsResult {
  engine: "graph" | "loop";
  steps: number;
  clientMsPerStep: number;
  /** Bytes of the `messages` of the last request: the whole conversation as sent. */
  wireBytes: number;
  /** Bytes of what the engine stored for the thread (SQLite files, or the loop's JSON). */
  storedBytes: number;
}

function bytesUnder(dir: string, keep: (name: string, dir: string) => boolean = () => true): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(p, keep);
    else if (keep(entry.name, dir)) total += statSync(p).size;
  }
  return total;
}

/** One run of `steps` one-read steps through the installed command (the bundle). */
export async function runSteps(
  engine: "graph" | "loop",
  steps: number,
  bundle = path.join(ROOT, "dist", "cli.bundle.cjs"),
): Promise<StepsResult> {
  const server = await startBenchServer(oneReadScript(steps));
  const workspace = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-steps-"));
  // The run's own state home: its thread's files are all that is in it, and nothing is left behind.
  const stateHome = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-steps-state-"));
  try {
    for (const [i, name] of READ_FILES.entries())
      writeFileSync(path.join(workspace, name), `note ${i}: ${"a short line of notes\n".repeat(5)}`);
    const args = [
      bundle,
      ...[
        "--workspace",
        workspace,
        "--json",
        "--engine",
        engine,
        "--approval",
        "full-auto",
        "--max-steps",
        String(steps + 5),
        "--thread",
        "bench",
      ],
      "read the notes",
    ];
    const exit = await run(
      process.execPath,
      args,
      cleanEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "bench", MINI_CURSOR_STATE_HOME: stateHome }),
      workspace,
    );
    const chats: TimedRequest[] = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
    if (exit.code !== 0 || chats.length !== steps) {
      throw new Error(
        `${engine} × ${steps}: exit ${exit.code} after ${chats.length} requests\n${exit.stderr.slice(-2000)}\n${exit.stdout.slice(-2000)}`,
      );
    }
    const last = chats.reduce((a, b) => (b.arrivedAt > a.arrivedAt ? b : a));
    const storedBytes =
      engine === "graph"
        ? bytesUnder(stateHome, (n) => n.startsWith("state.sqlite"))
        : bytesUnder(stateHome, (_n, dir) => dir.split(path.sep).includes("loop-threads"));
    return { engine, steps, clientMsPerStep: clientMsPerStep(chats), wireBytes: last.messagesBytes, storedBytes };
  } finally {
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(stateHome, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function until<T>(probe: () => Promise<T | undefined>, deadlineMs: number, what: string): Promise<T> {
  const end = performance.now() + deadlineMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (performance.now() > end) throw new Error(`${what} did not happen within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

export interface StudioResult {
  /** Spawn of `npm run studio`'s script to the API answering /ok. */
  readyMs: number;
  /** /ok answering to the graph's schemas (what Studio needs to open the graph). */
  schemaMs: number;
  /** Top-level state and configuration fields the schemas list. */
  stateFields: string[];
  configFields: string[];
}

/** Starts scripts/studio.mjs on a free port, asks for the graph's schemas as Studio does, stops it. */
export async function measureStudio(debugSchemas = false): Promise<StudioResult> {
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const workspace = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-studio-"));
  const env = cleanEnv({ MINI_CURSOR_WORKSPACE: workspace, LANGGRAPH_CLI_NO_ANALYTICS: "1" });
  for (const key of Object.keys(env)) if (key.startsWith("LANGSMITH_") || key.startsWith("LANGCHAIN_")) delete env[key];
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(ROOT, "scripts", "studio.mjs"), "--port", String(port), "--no-reload"],
    {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  try {
    const alive = () => {
      if (child.exitCode !== null) throw new Error(`the Studio dev server exited early:\n${output.slice(-2000)}`);
    };
    const readyAt = await until(
      async () => (alive(), (await fetch(`${api}/ok`)).ok ? performance.now() : undefined),
      STUDIO_DEADLINE_MS,
      "the dev server's /ok",
    );
    const post = await fetch(`${api}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ graph_id: "agent" }),
    });
    const [assistant] = (await post.json()) as Array<{ assistant_id: string }>;
    if (!assistant) throw new Error(`the dev server lists no assistant for the graph "agent":\n${output.slice(-2000)}`);
    const res = await fetch(`${api}/assistants/${assistant.assistant_id}/schemas`, {
      signal: AbortSignal.timeout(STUDIO_DEADLINE_MS),
    });
    const schemaAt = performance.now();
    if (!res.ok) throw new Error(`schemas: HTTP ${res.status} ${await res.text()}\n${output.slice(-2000)}`);
    const body = (await res.json()) as {
      state_schema?: { properties?: object };
      config_schema?: { properties?: object };
    };
    if (debugSchemas) process.stderr.write(`${JSON.stringify(body, null, 1)}\n`);
    return {
      readyMs: readyAt - started,
      schemaMs: schemaAt - readyAt,
      stateFields: Object.keys(body.state_schema?.properties ?? {}),
      configFields: Object.keys(body.config_schema?.properties ?? {}),
    };
  } finally {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // Gone already.
    }
    const killer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Gone already.
      }
    }, 15_000);
    await exited;
    clearTimeout(killer);
    rmSync(workspace, { recursive: true, force: true });
  }
}
