import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { baseEnv, PROJECT_ROOT, runCli, TSX_LOADER } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";
import { stateDirOf } from "./helpers/state-dir.js";
import { shellQuote } from "../src/shell-quote.js";

/**
 * Issue 14: what a newcomer trips over. Hints are commands that work as printed, usage errors
 * speak the user's words, and output behaves when piped.
 */

const CLI = path.join(PROJECT_ROOT, "src", "cli.ts");
/** How a test starts the CLI from a shell line (the hint's `mini-cursor` stands for this). */
const CLI_COMMAND = `${process.execPath} --import ${TSX_LOADER} ${CLI}`;

let tmp: ReturnType<typeof makeTempDir>;
let ws: string;
beforeEach(() => {
  tmp = makeTempDir();
  // A space and a quote in the path: the hint must quote it.
  ws = path.join(tmp.dir, "my 'app'");
  mkdirSync(ws);
  writeFileSync(path.join(ws, "package.json"), '{ "name": "demo" }\n');
});
afterEach(() => tmp.cleanup());

/** Runs a shell line (a pipeline) and returns its output and every exit status of the pipeline. */
function shell(line: string, cwd: string): Promise<{ stdout: string; stderr: string; statuses: number[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `${line}; echo "statuses=\${PIPESTATUS[*]}" >&2`], { cwd, env: baseEnv() });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`shell did not finish: ${line}\n${stdout}\n${stderr}`));
    }, 90_000);
    child.on("close", () => {
      clearTimeout(timer);
      const match = /statuses=([\d ]+)\n$/.exec(stderr);
      resolve({
        stdout,
        stderr: stderr.replace(/statuses=[\d ]+\n$/, ""),
        statuses: (match?.[1] ?? "").trim().split(" ").map(Number),
      });
    });
  });
}

test("item 8: the step-limit hint is a command that resumes the thread from any folder", async () => {
  const first = await runCli(["--workspace", ws, "--max-steps", "1", "read package.json"], { cwd: tmp.dir });
  expect(first.code).toBe(3);
  const hint = /Continue with: (.+)\n/.exec(first.stdout)?.[1];
  const threadId = /thread {4}(\S+)/.exec(first.stdout)?.[1];
  expect(hint).toBe(`mini-cursor --workspace '${tmp.dir}/my '\\''app'\\''' --thread ${threadId} continue`);
  // Pasted in another folder, it continues the same thread in the same workspace.
  const elsewhere = path.join(tmp.dir, "elsewhere");
  mkdirSync(elsewhere);
  const second = await shell(hint!.replace(/^mini-cursor/, CLI_COMMAND), elsewhere);
  expect(second.stdout).toContain(`thread    ${threadId} (resumed)`);
  expect(second.stdout).toContain(`workspace ${ws}`);
  expect(second.statuses).toEqual([0]);
});

test("item 8: a generated thread id that is not in this workspace is a usage error saying what --threads shows", async () => {
  const r = await runCli(["--workspace", ws, "--thread", "20261129-a1b2c3", "continue"]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe(
    `mini-cursor: there is no thread 20261129-a1b2c3 in the workspace ${ws}. There are no saved threads here yet. If it was started in another folder, pass that folder with --workspace; to start a new thread, leave --thread out.\n`,
  );
  expect(() => readFileSync(path.join(stateDirOf(ws), "threads.json"))).toThrow();
  // A name of one's own still starts a thread under it (--help's example).
  const named = await runCli(["--workspace", ws, "--thread", "demo", "what is in package.json?"]);
  expect(named.code).toBe(0);
  expect(named.stdout).toContain('→ read_file filePath="package.json"');
  expect(named.stdout).toContain('{ "name": "demo" }');
});

test("item 11: the root folder, the home folder and empty values are refused with a reason", async () => {
  const root = await runCli(["--workspace", "/", "list the files here"]);
  expect(root.code).toBe(2);
  expect(root.stderr).toBe(
    "mini-cursor: --workspace / is the root of the file system: every tool would work on the whole machine. Choose a project folder: cd into it, or pass --workspace path/to/project.\n",
  );
  const home = path.join(tmp.dir, "home");
  mkdirSync(home);
  const inHome = await runCli(["list the files here"], { cwd: home, env: baseEnv({ HOME: home }) });
  expect(inHome.code).toBe(2);
  expect(inHome.stderr).toContain(
    `mini-cursor: The current folder (${home}), the default workspace, is your home folder itself:`,
  );
  const emptyWs = await runCli(["--workspace", "", "list"]);
  expect([emptyWs.code, emptyWs.stderr]).toEqual([
    2,
    "mini-cursor: --workspace needs a folder, got an empty value. Leave the flag out to use the current folder.\n",
  ]);
  const emptyThread = await runCli(["--workspace", ws, "--thread", "", "list"]);
  expect([emptyThread.code, emptyThread.stderr]).toEqual([
    2,
    "mini-cursor: --thread needs an id, got an empty value. --threads lists the saved ones; leave the flag out to start a new thread.\n",
  ]);
  const zero = await runCli(["--workspace", ws, "--max-steps", "0", "list"]);
  expect([zero.code, zero.stderr]).toEqual([
    2,
    "mini-cursor: --max-steps is the number of model turns a task may take: a whole number from 1 to 10000, got 0.\n",
  ]);
});

test("item 11: --model without a key or base URL says the offline model runs instead", async () => {
  const r = await runCli(["--workspace", ws, "--model", "gpt-4o", "list the files here"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe(
    "mini-cursor: --model gpt-4o is not used: neither OPENAI_API_KEY nor OPENAI_BASE_URL is set, so the embedded offline model runs. Set one of them (see .env.example) to use gpt-4o.\n",
  );
});

test("item 12: a closed stdout ends --help and a task quietly", async () => {
  const help = await shell(`set -o pipefail; ${CLI_COMMAND} --help | head -1`, tmp.dir);
  expect(help.stdout).toBe("Usage: mini-cursor [options] [task...]\n");
  expect(help.stderr).toBe("");
  expect(help.statuses).toEqual([0, 0]);
  // `true` reads nothing and exits at once: every write of the run meets a closed pipe.
  const task = await shell(`${CLI_COMMAND} --workspace '${tmp.dir}' "list the files here" | true`, tmp.dir);
  expect(task.stderr).toBe("");
  expect(task.statuses).toEqual([0, 0]);
});

test("item 17: --threads --json prints JSON Lines", async () => {
  await runCli(["--workspace", ws, "--thread", "one", "list the files here"]);
  await runCli(["--workspace", ws, "--thread", "two", "read package.json"]);
  const r = await runCli(["--workspace", ws, "--threads", "--json"]);
  expect(r.code).toBe(0);
  const lines = r.stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((t) => [t.id, t.firstRequest, t.engine, t.runs])).toEqual([
    ["two", "read package.json", "graph", 1],
    ["one", "list the files here", "graph", 1],
  ]);
});

test("item 18: npm run compare without a task is a usage error with a hint", async () => {
  const r = await shell(
    `${process.execPath} --import ${TSX_LOADER} ${path.join(PROJECT_ROOT, "scripts", "compare.ts")}`,
    os.tmpdir(),
  );
  expect(r.statuses).toEqual([2]);
  expect(r.stderr).toBe(
    "error: missing required argument 'task'\n" +
      'Usage: npm run compare -- [--workspace <dir>] [--json] "<task>"   (e.g. npm run compare -- "list the files here"), or npm run compare -- --parts\n',
  );
});

test("item 9: a damaged state.sqlite is named with what to do, and nothing is added", async () => {
  const state = stateDirOf(ws);
  mkdirSync(state, { recursive: true });
  const db = path.join(state, "state.sqlite");
  const quote = shellQuote;
  writeFileSync(db, "this is not a database, it is a text file long enough to have a header of its own\n".repeat(20));
  const r = await runCli(["--workspace", ws, "list the files here"]);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe(
    `mini-cursor: ${db} is not a readable SQLite database (file is not a database), so the saved threads of this workspace cannot be read. ` +
      `Move it aside and run again, e.g. mv ${quote(db)} ${quote(`${db}.damaged`)}; a new, empty one is made (the threads in the old one stay in the moved file).\n`,
  );
  expect(() => readFileSync(path.join(state, "threads.json"))).toThrow();
  expect((await runCli(["--workspace", ws, "--threads"])).stdout).toBe("No saved threads in this workspace yet.\n");
});

test("item 9: a damaged threads.json is rebuilt from the threads themselves", async () => {
  expect((await runCli(["--workspace", ws, "--thread", "g1", "read package.json"])).code).toBe(0);
  expect((await runCli(["--workspace", ws, "--engine", "loop", "--thread", "l1", "list the files here"])).code).toBe(0);
  const index = path.join(stateDirOf(ws), "threads.json");
  writeFileSync(index, '[{"id": "g1", "engi');
  const r = await runCli(["--workspace", ws, "--threads", "--json"]);
  expect(r.code).toBe(0);
  const threads = r.stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(threads.map((t) => [t.id, t.engine, t.firstRequest, t.steps, t.runs]).sort()).toEqual([
    ["g1", "graph", "read package.json", 2, 1],
    ["l1", "loop", "list the files here", 2, 1],
  ]);
  expect(readFileSync(`${index}.damaged`, "utf8")).toBe('[{"id": "g1", "engi');
  // And the rebuilt index is what the next run extends.
  const resumed = await runCli(["--workspace", ws, "--thread", "g1", "read package.json"]);
  expect(resumed.stdout).toContain("thread    g1 (resumed)");
});

test("item 10: a request larger than the budget is said up front and sent as head and tail; the run ends normally", async () => {
  const task = `read package.json ${"and this pasted log line says nothing new ".repeat(1000)}`;
  const r = await runCli(["--workspace", ws, "--json", task], { env: baseEnv({ MINI_CURSOR_CONTEXT_TOKENS: "4000" }) });
  expect(r.stderr).toContain(
    "This request is about 10509 tokens, more than the model may be sent at once (half the context budget of 4000, MINI_CURSOR_CONTEXT_TOKENS): it gets the beginning and the end, with a note saying what was left out.",
  );
  expect(r.code).toBe(0);
  const events = r.stdout
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
  // One read and the answer: the result was not dropped, so the model did not call it again.
  expect(events.filter((e) => e.type === "tool_call").map((e) => e.name)).toEqual(["read_file"]);
  expect(events.at(-1)).toMatchObject({ type: "run_end", reason: "done", steps: 2 });
  expect(String(events.find((e) => e.type === "final")?.text)).toContain('{ "name": "demo" }');
});

test("item 20: installed with npm install -g, the mini-cursor command works from any folder", async () => {
  const prefix = path.join(tmp.dir, "prefix");
  // A folder installs as a link to this clone: no registry, no scripts, a few seconds.
  const install = await shell(
    `npm install -g --prefix '${prefix}' --offline --no-audit --no-fund --ignore-scripts '${PROJECT_ROOT}'`,
    tmp.dir,
  );
  expect(install.statuses).toEqual([0]);
  const elsewhere = path.join(tmp.dir, "some project");
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, "notes.txt"), "hi\n");
  const bin = path.join(prefix, "bin");
  const version = await shell(`PATH='${bin}':"$PATH" mini-cursor --version`, elsewhere);
  expect([version.stdout, version.statuses]).toEqual([
    `${JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")).version}\n`,
    [0],
  ]);
  const run = await shell(`PATH='${bin}':"$PATH" mini-cursor "list the files here"`, elsewhere);
  expect(run.statuses).toEqual([0]);
  expect(run.stdout).toContain(`workspace ${elsewhere}`);
  expect(run.stdout).toContain("file  notes.txt  3 B");
});

test("item 19: every dependency with an install script is allowed or denied in allowScripts", async () => {
  const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as {
    allowScripts: Record<string, boolean>;
  };
  const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }>;
  };
  const withScripts = Object.entries(lock.packages)
    .filter(([where, info]) => where !== "" && info.hasInstallScript)
    .map(([where]) => where.slice(where.lastIndexOf("node_modules/") + "node_modules/".length));
  expect([...new Set(withScripts)].sort()).toEqual(Object.keys(pkg.allowScripts).sort());
  expect(pkg.allowScripts).toEqual({
    "@parcel/watcher": false,
    "better-sqlite3": true,
    esbuild: true,
    "tree-sitter-bash": false,
  });
  // npm 11 says the same of what is installed (npm 10 has no install-scripts command).
  const npm = await shell("npm --version", PROJECT_ROOT);
  if (Number(npm.stdout.split(".")[0]) >= 11) {
    const ls = await shell("npm install-scripts ls", PROJECT_ROOT);
    expect(ls.stdout).toBe("No packages with unreviewed install scripts.\n");
  }
});

/** What `git status` says about the clone: a refused run must leave it as it was. */
function cloneStatus(): string {
  return spawnSync("git", ["status", "--porcelain", "--ignored"], { cwd: PROJECT_ROOT, encoding: "utf8" }).stdout;
}

test("issue 44 item 3: mini-cursor's own folder is never the default workspace; named, it is", async () => {
  const before = cloneStatus();
  const expected = (folder: string, where: string) =>
    `mini-cursor: The current folder (${folder}), the default workspace, ${where}: the agent would work on mini-cursor's own files, and what it makes would land in there. ` +
    `Name the project it should work on: mini-cursor --workspace path/to/project "your task" (the folder must exist: mkdir -p it first), or cd into the project and run mini-cursor there (npm link once makes the command). ` +
    `To work on mini-cursor itself, say so: --workspace ${shellQuote(folder)}.\n`;
  // As `npm start` leaves it: the command runs in the clone, INIT_CWD is where npm ran.
  const npmStart = await runCli(["--approval", "full-auto", "create a React todo app with Vite"], {
    cwd: PROJECT_ROOT,
    env: baseEnv({ INIT_CWD: PROJECT_ROOT }),
  });
  expect([npmStart.code, npmStart.stdout, npmStart.stderr]).toEqual([
    2,
    "",
    expected(PROJECT_ROOT, "is mini-cursor's own folder"),
  ]);
  const src = path.join(PROJECT_ROOT, "src");
  const inside = await runCli(["list the files here"], { cwd: src });
  expect([inside.code, inside.stderr]).toEqual([
    2,
    expected(src, `is inside mini-cursor's own folder (${PROJECT_ROOT})`),
  ]);
  // No session either, and nothing written in the clone.
  const session = await runCli(["--each-line"], { cwd: PROJECT_ROOT, input: "list the files here\n" });
  expect(session.code).toBe(2);
  expect(cloneStatus()).toBe(before);

  // Named on purpose, with the flag or the variable, it is the workspace.
  const flagged = await runCli(["--workspace", ".", "--json", "list the files here"], { cwd: PROJECT_ROOT });
  expect(flagged.code).toBe(0);
  expect(JSON.parse(flagged.stdout.split("\n")[0]!)).toMatchObject({ type: "run_start", workspace: PROJECT_ROOT });
  const fromEnv = await runCli(["--threads"], {
    cwd: PROJECT_ROOT,
    env: baseEnv({ MINI_CURSOR_WORKSPACE: PROJECT_ROOT }),
  });
  expect(fromEnv.code).toBe(0);
});
