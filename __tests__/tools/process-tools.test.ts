import { writeFileSync } from "node:fs";
import path from "node:path";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { tailLines } from "../../src/tools/process-output.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive } from "../helpers/pids.js";

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;

const call = async (name: "process_output" | "stop_process" | "execute_command", args: Record<string, unknown>) =>
  (await tools[name].invoke(args as never)) as string;

beforeEach(() => {
  tmp = makeTempDir();
  tools = createTools({ workspace: tmp.dir, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  // A server that says where it listens, then logs a line for every request.
  writeFileSync(
    path.join(tmp.dir, "server.cjs"),
    `const http = require("node:http");
const server = http.createServer((req, res) => { console.log("GET " + req.url); res.end("ok"); });
server.listen(0, "127.0.0.1", () => console.log("Local: http://127.0.0.1:" + server.address().port + "/"));
`,
  );
});
afterEach(async () => {
  await tools.processes.stopAll();
  tmp.cleanup();
});

test("process_output shows a background server's latest output; stop_process stops it", async () => {
  expect(await call("execute_command", { command: "node server.cjs" })).toMatch(/^Running in the background as bg-1/);
  const [bg] = tools.processes.list();
  await fetch(`${bg!.url}hello`);
  await waitFor(() => bg!.output().includes("GET /hello"));

  const output = await call("process_output", { id: "bg-1" });
  const lines = output.split("\n");
  expect(lines[0]).toMatch(
    new RegExp(
      `^bg-1 \\(pid ${bg!.pid}\\) \`node server.cjs\` in \\.: running at ${bg!.url!.replace(/[.]/g, "\\.")}, started \\d+ s ago\\.$`,
    ),
  );
  expect(lines.slice(1)).toEqual(["Output (all 2 lines):", `Local: ${bg!.url}`, "GET /hello"]);

  expect((await call("process_output", { id: "bg-1", tail: 1 })).split("\n").slice(1)).toEqual([
    "Output (last 1 of the 2 lines kept):",
    "GET /hello",
  ]);

  expect(await call("stop_process", { id: "bg-1" })).toBe(
    "Stopped bg-1 (`node server.cjs`) and the processes it started.",
  );
  expect(isAlive(bg!.pid)).toBe(false);
  await waitFor(() => !bg!.running);
  expect(await call("stop_process", { id: "bg-1" })).toMatch(
    /^bg-1 \(pid \d+\) `node server.cjs` in \.: exited with code \d+, started \d+ s ago; nothing to stop\.$/,
  );
  expect((await call("process_output", { id: "bg-1" })).split("\n")[0]).toMatch(/: exited with code \d+/);
});

test("secrets are redacted from the output", async () => {
  tools = createTools({ workspace: tmp.dir, env: { PATH: process.env.PATH }, redact: ["sk-supersecret123"] });
  writeFileSync(
    path.join(tmp.dir, "leak.cjs"),
    'console.log("key sk-supersecret123 ready on http://127.0.0.1:9"); setInterval(() => {}, 1000);\n',
  );
  await call("execute_command", { command: "node leak.cjs" });
  expect(await call("process_output", { id: "bg-1" })).toContain("key [redacted] ready");
});

test("unknown ids get a message listing the known processes", async () => {
  expect(await call("process_output", { id: "bg-9" })).toBe(
    'Error: there is no background process "bg-9"; none has been started in this session.',
  );
  await call("execute_command", { command: "node server.cjs" });
  expect(await call("stop_process", { id: "bg-9" })).toBe(
    'Error: there is no background process "bg-9". Known: bg-1 (running: node server.cjs).',
  );
});

test("tailLines keeps the last lines within the character cap", () => {
  expect(tailLines("a\nb\nc\n", 2)).toEqual({ text: "b\nc", shown: 2, total: 3 });
  expect(tailLines("", 5)).toEqual({ text: "", shown: 0, total: 0 });
  const big = tailLines(`${"x".repeat(40_000)}\nshort\n`, 10);
  expect(big).toEqual({ text: "short", shown: 1, total: 2 });
});
