import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadSettings, type Settings } from "../../src/settings.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The SDK-written test server (stdio or streamable HTTP). */
export const MCP_TEST_SERVER = path.join(HERE, "mcp-test-server.mjs");
/** The published filesystem server, installed as a dev dependency. */
export const FILESYSTEM_SERVER = path.join(
  HERE,
  "..",
  "..",
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);

/** A stdio server entry (named "local" unless `extra` says `--name`); behind `sh -c` so the server is a grandchild, as under `npx`. */
export function stdioServer(pidFile: string, ...extra: string[]) {
  const quoted = [process.execPath, MCP_TEST_SERVER, "stdio", "--pid-file", pidFile, ...extra, "--name", "local"]
    .map((a) => `'${a}'`)
    .join(" ");
  return { command: "sh", args: ["-c", `${quoted}; exit $?`] };
}

/** Starts the test server over streamable HTTP on a free port; resolves with its URL. */
export function startHttpServer(name = "remote"): Promise<{ url: string; child: ChildProcess; stop: () => void }> {
  const child = spawn(process.execPath, [MCP_TEST_SERVER, "http", "--name", name], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the HTTP test server exited (${code}): ${out}`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (\S+)/.exec(out)?.[1];
      if (url) resolve({ url, child, stop: () => child.kill("SIGKILL") });
    });
  });
}

/** Writes the user's config file with these servers (the user's own file is trusted). */
export function writeUserConfig(file: string, content: unknown): void {
  writeFileSync(file, JSON.stringify(content));
}

/**
 * A wait notice ("Waiting for MCP server … to start") comes only after this long here: the
 * tests assert the notes a start gives exactly, and a loaded machine can take the default 2 s to
 * start a server. The notice itself is tested through the CLI (cli-state-waits.test.ts).
 */
const NO_WAIT_NOTICE_MS = "600000";

/** Settings for a workspace, with the user config, cache and trust store in `home`. */
export function mcpTestSettings(workspace: string, home: string, env: NodeJS.ProcessEnv = {}): Settings {
  return loadSettings(
    { workspace },
    {
      MINI_CURSOR_DOTENV: "off",
      MINI_CURSOR_WAIT_NOTICE_MS: NO_WAIT_NOTICE_MS,
      HOME: home,
      MINI_CURSOR_USER_CONFIG: path.join(home, "config.json"),
      MINI_CURSOR_MCP_CACHE: path.join(home, "mcp-tools.json"),
      MINI_CURSOR_TRUST_FILE: path.join(home, "trusted.json"),
      ...env,
    },
  );
}

export const readPid = (file: string): number => Number(readFileSync(file, "utf8"));

/** Live processes whose command line contains `text` (Linux /proc; zombies excluded). */
export function processesWith(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
