import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startBenchServer } from "./bench-server.js";
async function main() {
  const [script, outDir, ...extra] = process.argv.slice(2);
  const server = await startBenchServer(() => ({ content: "hello" }));
  const ws = mkdtempSync(path.join(os.tmpdir(), "prof-ws-"));
  const state = mkdtempSync(path.join(os.tmpdir(), "prof-state-"));
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${outDir}`, "--cpu-prof-interval", "200", script!, "--workspace", ws, "--json", ...extra, "say hello"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "x", MINI_CURSOR_STATE_HOME: state },
    stdio: "ignore",
  });
  await new Promise((r) => child.on("close", r));
  const first = Math.min(...server.requests.map((r) => r.arrivedAt));
  console.log("first request at", (first - t0).toFixed(0), "ms; exit at", (performance.now() - t0).toFixed(0));
  await server.close();
  rmSync(ws, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
main().then(() => process.exit(0));
