import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { ToolMessage } from "@langchain/core/messages";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import { spawnHelperPids, spawnHelperReady } from "../../src/workspace/process-spawner.js";
import { groupAlive } from "../../src/workspace/processes.js";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { formatProcesses } from "../../src/ui/repl.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive, killPids, pidsFrom } from "../helpers/pids.js";

/**
 * Background processes (dev servers) started through a spawn helper (workspace/process-spawner.ts)
 * that is then SIGKILLed: they run on in their own sessions, their output still arrives (the pipes
 * are the session's), every report of them says their exit status is unknown and why instead of a
 * made-up number, and stop_process and the session's end still stop their groups. A foreground
 * command whose output a process outside its group holds open still returns when its shell is
 * gone (before, its end was seen only as its output's, so it waited for the timeout, and the
 * session's end waited for ever on such a background process). One file of its
 * own: a helper's death makes this process start commands directly from then on.
 */

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;
/** Every pid a command printed, killed at the end whatever happened. */
const seen = new Set<number>();

beforeAll(() => {
  tmp = makeTempDir();
  tools = createTools({ workspace: tmp.dir, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
});
afterAll(async () => {
  await tools.processes.stopAll();
  killPids([...seen, ...spawnHelperPids()]);
  tmp.cleanup();
});

const call = async (name: "process_output" | "stop_process" | "execute_command", args: Record<string, unknown>) =>
  (await tools[name].invoke(args as never)) as string;

/** Field 4 (ppid) of /proc/<pid>/stat, read by the command itself. */
const FAMILY = `read -r stat < /proc/$$/stat; set -- \${stat##*) }; echo "pid=$$ ppid=$2"`;
const waitFile = (name: string) => `until [ -e ${name} ]; do sleep 0.02; done`;
const ENDS = `${FAMILY}; echo "listening on http://localhost:4101"; ${waitFile("go-a")}; echo a-after; exit 3`;
const STOPPED = `${FAMILY}; echo "listening on http://localhost:4102"; ${waitFile("go-b")}; echo b-after; exec sleep 600`;
const LEFT = `${FAMILY}; setsid sleep 600 & echo "pid=$!"; echo "listening on http://localhost:4103"; exec sleep 600`;
/** In the foreground, with a process outside its group holding its output open after it exits. */
const FOREGROUND = `setsid sleep 600 & echo "pid=$!" > fg-outside; ${FAMILY} > fg-family; ${waitFile("go-f")}; echo f-after; exit 5`;

/** The header line with the age made fixed. */
const header = (text: string) => text.split("\n")[0]!.replace(/started \d+ s ago/, "started N s ago");

it("a background process whose helper was SIGKILLed keeps its output, says its exit status is unknown, and is stopped by stop_process and the session's end", async () => {
  expect(await spawnHelperReady()).toBe(true);
  for (const command of [ENDS, STOPPED, LEFT])
    expect(await call("execute_command", { command })).toMatch(/^Running in the background as bg-\d \(pid \d+\)/);
  const [ends, stopped, left] = tools.processes.list();
  for (const p of [ends!, stopped!, left!]) await waitFor(() => pidsFrom(p.output()).length > 0, 30_000);
  for (const p of [ends!, stopped!, left!]) for (const pid of pidsFrom(p.output())) seen.add(pid);
  const helperOf = (text: string) => Number(/ppid=(\d+)/.exec(text)![1]);
  const helpers = [ends!, stopped!, left!].map((p) => helperOf(p.output()));
  for (const h of helpers) expect(spawnHelperPids()).toContain(h);
  const outside = pidsFrom(left!.output())[1]!;
  expect(isAlive(outside)).toBe(true);
  // A command in the foreground too, as a model's call (the trace reads its status and artifact).
  const foreground = tools.execute_command.invoke({
    id: "call-fg",
    name: "execute_command",
    args: { command: FOREGROUND, timeoutMs: 60_000 },
    type: "tool_call",
  }) as Promise<ToolMessage>;
  const familyFile = path.join(tmp.dir, "fg-family");
  const fgMatch = await waitFor(
    () =>
      (existsSync(familyFile) ? /pid=(\d+) ppid=(\d+)\n/.exec(readFileSync(familyFile, "utf8")) : null) ?? undefined,
    30_000,
  );
  const [fgShell, fgHelper] = [Number(fgMatch![1]), Number(fgMatch![2])];
  const fgOutside = pidsFrom(readFileSync(path.join(tmp.dir, "fg-outside"), "utf8"))[0]!;
  seen.add(fgShell).add(fgOutside);
  expect(spawnHelperPids()).toContain(fgHelper);

  for (const h of spawnHelperPids()) process.kill(h, "SIGKILL");
  await waitFor(() => helpers.every((h) => !isAlive(h)), 30_000);
  // Their own sessions: none of them went with the helper.
  for (const p of [ends!, stopped!, left!]) expect(isAlive(p.pid)).toBe(true);
  expect(await call("process_output", { id: "bg-1" })).toMatch(/: running at http:\/\/localhost:4101, started/);

  // The foreground command returns when its shell is gone, though its output is held open.
  writeFileSync(path.join(tmp.dir, "go-f"), "");
  const message = await foreground;
  expect({ status: message.status, artifact: message.artifact, content: message.content }).toEqual({
    status: "error",
    artifact: undefined,
    content: `Exit status unknown (its spawn helper ${fgHelper} died: killed by SIGKILL); run it again if the result matters\nf-after`,
  });
  expect(isAlive(fgOutside)).toBe(true);

  // Output printed after the helper died still arrives.
  writeFileSync(path.join(tmp.dir, "go-b"), "");
  await waitFor(() => stopped!.output().includes("b-after"), 30_000);
  expect(stopped!.output()).toBe(
    `pid=${stopped!.pid} ppid=${helpers[1]}\nlistening on http://localhost:4102\nb-after\n`,
  );

  // It exits by itself (with 3): nobody can tell, and nobody is told a number.
  writeFileSync(path.join(tmp.dir, "go-a"), "");
  await waitFor(() => !ends!.running, 30_000);
  expect(ends!.exitCode).toBeNull();
  expect(ends!.helperLost).toEqual({ helperPid: helpers[0], how: "killed by SIGKILL" });
  const lost = (helper: number) => `ended, exit status unknown (its spawn helper ${helper} died: killed by SIGKILL)`;
  const output = await call("process_output", { id: "bg-1" });
  expect(header(output)).toBe(`bg-1 (pid ${ends!.pid}) \`${ENDS}\` in .: ${lost(helpers[0]!)}, started N s ago.`);
  expect(output.split("\n").slice(1)).toEqual([
    "Output (all 3 lines):",
    `pid=${ends!.pid} ppid=${helpers[0]}`,
    "listening on http://localhost:4101",
    "a-after",
  ]);
  expect(header(await call("stop_process", { id: "bg-1" }))).toBe(
    `bg-1 (pid ${ends!.pid}) \`${ENDS}\` in .: ${lost(helpers[0]!)}, started N s ago; nothing to stop.`,
  );

  // stop_process stops the group of one still running.
  expect(await call("stop_process", { id: "bg-2" })).toBe(
    `Stopped bg-2 (\`${STOPPED}\`) and the processes it started.`,
  );
  expect(groupAlive(stopped!.pid)).toBe(false);
  expect(stopped!.running).toBe(false);
  expect(stopped!.helperLost).toEqual({ helperPid: helpers[1], how: "killed by SIGKILL" });
  expect(formatProcesses(tools.processes.list())).toBe(
    [
      `bg-1  pid ${ends!.pid}  ${lost(helpers[0]!)}  http://localhost:4101  ${ENDS}`,
      `bg-2  pid ${stopped!.pid}  ${lost(helpers[1]!)}  http://localhost:4102  ${STOPPED}`,
      `bg-3  pid ${left!.pid}  running  http://localhost:4103  ${LEFT}`,
    ].join("\n"),
  );

  // The session's end stops the last one, though a process outside its group holds its output open.
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("stopAll did not return within 30 s")), 30_000);
  });
  const atEnd = await Promise.race([tools.processes.stopAll(), stuck]).finally(() => clearTimeout(timer));
  expect(atEnd.map((p) => p.id)).toEqual(["bg-3"]);
  expect(left!.helperLost).toEqual({ helperPid: helpers[2], how: "killed by SIGKILL" });
  expect(groupAlive(left!.pid)).toBe(false);
  for (const pid of [...seen, outside]) expect({ pid, alive: isAlive(pid) }).toEqual({ pid, alive: false });
}, 120_000);
