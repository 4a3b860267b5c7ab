import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, runCli } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Plan mode without a key (issue 31, item 2), through the real CLI and the offline model: a
 * planned request is recognised, plan mode's note never reaches an argument or a file, and
 * `/plan accept` with no plan says so and sends nothing.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, "notes.txt"), "hello notes\n");
});
afterEach(() => tmp.cleanup());

const cli = (args: string[], input?: string) =>
  runCli(["--workspace", tmp.dir, "--sandbox", "off", ...args], { env: baseEnv(), input, timeoutMs: 90_000 });

interface JsonEvent {
  type: string;
  name?: string;
  args?: Record<string, unknown>;
  text?: string;
}
const eventsOf = (stdout: string): JsonEvent[] =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as JsonEvent);

test("--approval plan 'read notes.txt': the offline model plans the read and takes it, and names the file it read", async () => {
  const r = await cli(["--approval", "plan", "--json", "read notes.txt"]);
  expect(r.code).toBe(0);
  const events = eventsOf(r.stdout);
  expect(events.filter((e) => e.type === "tool_call").map((e) => [e.name, e.args])).toEqual([
    ["write_todos", { todos: [{ content: "Read notes.txt", status: "pending" }] }],
    ["read_file", { filePath: "notes.txt" }],
  ]);
  const final = events.find((e) => e.type === "final")!;
  expect(final.text).toBe(
    "Plan (offline model, one step):\n1. Read notes.txt\nNothing was changed in plan mode. Accept the plan (/plan accept) to carry it out.\n\nFile notes.txt:\n\n     1\thello notes\n\n[Lines 1-1 of 1, end of file.]",
  );
});

test("/plan create a file p.txt ...: the note stays out of the plan, and /plan accept writes exactly the content asked for", async () => {
  const r = await cli(["--json", "--each-line"], "/plan create a file p.txt with content Planned\n/plan accept\n");
  expect(r.code).toBe(0);
  const calls = eventsOf(r.stdout).filter((e) => e.type === "tool_call");
  expect(calls.map((e) => [e.name, e.args])).toEqual([
    ["write_todos", { todos: [{ content: 'Write p.txt with the content "Planned"', status: "pending" }] }],
    ["write_file", { filePath: "p.txt", content: "Planned" }],
  ]);
  expect(JSON.stringify(calls)).not.toContain("mini-cursor");
  expect(readFileSync(path.join(tmp.dir, "p.txt"), "utf8")).toBe("Planned");
});

test("/plan accept with no plan made says so and sends nothing", async () => {
  const r = await cli(["--each-line"], "/plan\n/plan accept\n");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    "There is no plan to accept yet: send a request in plan mode first (/plan <request>). Still in plan mode.",
  );
  expect(r.stdout).not.toContain("step 1");
  expect(r.stdout).not.toContain("Carry out the plan.");
  expect(existsSync(path.join(tmp.dir, "p.txt"))).toBe(false);
});
