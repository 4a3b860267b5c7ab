import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll } from "@jest/globals";
import { Client } from "@langchain/langgraph-sdk";
import { baseEnv, PROJECT_ROOT } from "./cli.js";
import { startOpenAIServer, type OpenAIServer, type Script } from "./openai-server.js";
import { makeTempDir, waitFor } from "./tmp.js";

/**
 * `npm run studio` as a real subprocess in a copy of the project (sources, scripts,
 * langgraph.json, .gitignore, node_modules linked), so its `.langgraph_api` state lands there
 * and a developer's `.env` cannot change the result: the copy has no `.env`, like a fresh clone.
 */

export const STUDIO_STARTUP_DEADLINE_MS = 120_000;
const PROJECT_ENTRIES = ["src", "scripts", "package.json", "langgraph.json", "tsconfig.json", ".gitignore", ".npmrc"];

export interface StudioServer {
  apiUrl: string;
  client: Client;
  assistantId: string;
  /** The project copy the server runs in. */
  project: string;
  /** Everything the server printed so far, stdout and stderr. */
  output(): string;
  /** SIGKILLs the server's process group and every process working in or naming the project or `alsoKillIn`, then removes the copy. */
  stop(): void;
  /** SIGKILLs the server's process group only, as a crash would: the copy and its `.langgraph_api` state stay. */
  kill(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Live processes (zombies aside) working in `dir` or naming it on their command line. */
export function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cwd === dir || cwd.startsWith(`${dir}/`) || cmdline.includes(dir)) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** SIGKILLs every process processesIn(dir) finds (those gone meanwhile are skipped). */
export function killAllIn(dir: string): void {
  for (const pid of processesIn(dir)) kill(pid, "SIGKILL");
}

/** Whether a GET of `url` answers 2xx within 2 s. */
export async function accepts(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Starts the dev server with `env` over baseEnv() (no key of the developer's, analytics off) and
 * waits until it is ready; in `inProject`, a copy a killed server left, it starts on that state.
 */
export async function startStudioServer(
  env: NodeJS.ProcessEnv,
  alsoKillIn: string[] = [],
  inProject?: string,
  /** More options of `npm run studio` (the server's command line). */
  options: string[] = [],
): Promise<StudioServer> {
  const project = inProject
    ? { dir: inProject, cleanup: () => rmSync(inProject, { recursive: true, force: true }) }
    : makeTempDir("mini-cursor-studio-project-");
  if (!inProject) {
    for (const entry of PROJECT_ENTRIES) {
      const from = path.join(PROJECT_ROOT, entry);
      if (existsSync(from)) cpSync(from, path.join(project.dir, entry), { recursive: true });
    }
    symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(project.dir, "node_modules"), "dir");
  }
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  let output = "";
  const child: ChildProcess = spawn("npm", ["run", "studio", "--", "--port", String(port), "--no-reload", ...options], {
    cwd: project.dir,
    env: baseEnv({ LANGGRAPH_CLI_NO_ANALYTICS: "1", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const killServer = () => {
    if (child.pid) kill(-child.pid, "SIGKILL");
  };
  const stop = () => {
    killServer();
    for (const dir of [project.dir, ...alsoKillIn]) killAllIn(dir);
    project.cleanup();
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error("npm run studio exited early");
        return (await accepts(`${apiUrl}/ok`)) && output.includes("mini-cursor is ready for LangGraph Studio");
      },
      STUDIO_STARTUP_DEADLINE_MS,
      250,
    );
  } catch (err) {
    stop();
    throw new Error(`${(err as Error).message}\n--- npm run studio output ---\n${output}`);
  }
  const client = new Client({ apiUrl });
  const [assistant] = await client.assistants.search({ graphId: "agent" });
  return {
    apiUrl,
    client,
    assistantId: assistant?.assistant_id ?? "",
    project: project.dir,
    output: () => output,
    kill: killServer,
    stop,
  };
}

export interface StudioFixture {
  readonly studio: StudioServer;
  /** The scripted provider the server's runs talk to. */
  readonly model: OpenAIServer;
  readonly workspace: ReturnType<typeof makeTempDir>;
}

/**
 * One dev server for the test file: started before its tests on a fresh workspace against a
 * scripted provider (sandbox off, so stopping it is the server's own doing on every machine),
 * with `env()` added (read when it starts), and stopped with all it left after them.
 */
export function useStudioServer(
  script: Script,
  env: () => NodeJS.ProcessEnv = () => ({}),
  options: string[] = [],
): StudioFixture {
  const fx = {} as { studio: StudioServer; model: OpenAIServer; workspace: ReturnType<typeof makeTempDir> };
  beforeAll(async () => {
    fx.workspace = makeTempDir("mini-cursor-studio-ws-");
    fx.model = await startOpenAIServer(script);
    fx.studio = await startStudioServer(
      {
        OPENAI_BASE_URL: fx.model.url,
        OPENAI_API_KEY: "test",
        MINI_CURSOR_WORKSPACE: fx.workspace.dir,
        MINI_CURSOR_SANDBOX: "off",
        ...env(),
      },
      [fx.workspace.dir],
      undefined,
      options,
    );
  }, STUDIO_STARTUP_DEADLINE_MS + 60_000);
  afterAll(async () => {
    fx.studio?.stop();
    await fx.model?.close();
    fx.workspace?.cleanup();
  });
  return fx;
}

/** The one-time approval codes (studio-secret.ts) the server printed for the thread's waiting calls, in order, once there are `atLeast`. */
export function printedApprovalCodes(
  output: () => string,
  threadId: string,
  atLeast = 1,
  timeoutMs = 20_000,
): Promise<string[]> {
  const pattern = new RegExp(`in thread ${threadId} waits for approval[^\\n]*\\n  One-time approval code: (\\S+)`, "g");
  return waitFor((): string[] | undefined => {
    const found = [...output().matchAll(pattern)].map((m) => m[1]!);
    return found.length >= atLeast ? found : undefined;
  }, timeoutMs).catch(() => {
    throw new Error(`the server printed no approval code for thread ${threadId}:\n${output()}`);
  }) as Promise<string[]>;
}
