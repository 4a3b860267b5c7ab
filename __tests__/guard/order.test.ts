import { getMaxListeners } from "node:events";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { accessOf } from "../../src/agent/dispatch.js";
import { guardTool, type CallAccess, type Dispatch } from "../../src/guard/guard.js";
import { conflicts, MAX_CONCURRENT_CALLS, orderGuard } from "../../src/guard/order.js";
import { createTools } from "../../src/tools/index.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

test("which calls of a turn wait for which", async () => {
  const ws = tmp.dir;
  const tools = createTools({ workspace: ws });
  const access = (name: string, args: Record<string, unknown>) => accessOf({ id: "", name, args }, tools, ws);
  const edit = (filePath: string) => access("edit_file", { filePath });
  const read = (filePath: string) => access("read_file", { filePath });
  const list = (directoryPath: string) => access("list_directory", { directoryPath });
  const command = access("execute_command", { command: "ls" });
  const mcp = accessOf({ id: "", name: "fs__write", args: { path: "x" } }, [{ name: "fs__write" }], ws);
  expect(conflicts(edit("a.txt"), edit("./a.txt"))).toBe(true);
  expect(conflicts(edit("a.txt"), edit("b.txt"))).toBe(false);
  expect(conflicts(read("a.txt"), read("a.txt"))).toBe(false);
  expect(conflicts(read("a.txt"), edit("a.txt"))).toBe(true);
  expect(conflicts(list("src"), edit("src/x.ts"))).toBe(true);
  expect(conflicts(list("src"), edit("srcx/x.ts"))).toBe(false);
  expect(conflicts(command, read("a.txt"))).toBe(true);
  // The commands of one turn run together (the model chains dependent ones with &&).
  expect(conflicts(command, access("execute_command", { command: "rm x" }))).toBe(false);
  expect(conflicts(mcp, read("a.txt"))).toBe(true);

  // Through the guard, the calls started together as LangGraph starts a superstep's Sends:
  // b waits for a (same path), c runs at once (another path); each reports in the model's order.
  const log: string[] = [];
  let releaseA!: () => void;
  const aDone = new Promise<void>((r) => (releaseA = r));
  const step = tool(
    async ({ id }: { id: string }) => {
      log.push(`start ${id}`);
      if (id === "a") await aDone;
      log.push(`end ${id}`);
      return id;
    },
    { name: "step", description: "test", schema: z.object({ id: z.string(), file: z.string() }) },
  );
  const guarded = guardTool(step, [orderGuard()]);
  const calls = [
    { id: "a", file: "f.txt" },
    { id: "b", file: "f.txt" },
    { id: "c", file: "g.txt" },
  ];
  const batch: Dispatch["batch"] = calls.map((c) => ({ id: c.id, access: edit(c.file) }));
  const all = Promise.all(
    calls.map((c) =>
      guarded.invoke({ id: c.id, name: "step", args: c, type: "tool_call" }, { state: { batch, step: 1 } } as never),
    ),
  );
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  expect(log).toEqual(["start a", "start c", "end c"]);
  releaseA();
  expect((await all).map((m) => (m as { content: string }).content)).toEqual(["a", "b", "c"]);
  expect(log).toEqual(["start a", "start c", "end c", "end a", "start b", "end b"]);
});

test("a call waiting for an earlier one that never comes (a resumed step) ends when the run is stopped", async () => {
  const noop = guardTool(
    tool(async () => "ran", { name: "noop", description: "test", schema: z.object({}) }),
    [orderGuard()],
  );
  const same: CallAccess = { writes: true, paths: ["/w/f.txt"] };
  const run = new AbortController();
  // b's turn holds a, which conflicts with it and is not running here.
  const waiting = noop.invoke(
    { id: "b", name: "noop", args: {}, type: "tool_call" },
    {
      signal: run.signal,
      state: {
        batch: [
          { id: "a", access: same },
          { id: "b", access: same },
        ],
        step: 1,
      },
    },
  );
  run.abort(new Error("stopped by the person"));
  await expect(waiting).rejects.toThrow("stopped by the person");
});

test("a turn's calls may all listen to the run's signal at once without Node reporting a leak", async () => {
  const noop = guardTool(
    tool(async () => "ok", { name: "noop", description: "test", schema: z.object({}) }),
    [orderGuard()],
  );
  const anything: CallAccess = { writes: false, paths: [] };
  const run = new AbortController();
  const callWith = (calls: number) =>
    noop.invoke(
      { id: "x0", name: "noop", args: {}, type: "tool_call" },
      {
        signal: run.signal,
        state: { batch: Array.from({ length: calls }, (_, i) => ({ id: `x${i}`, access: anything })), step: 1 },
      },
    );
  expect(getMaxListeners(run.signal)).toBe(10);
  await callWith(20);
  // Five listeners a call (its wait here, its tool's race, a command's process group, a hook), Node's ten on top.
  expect(getMaxListeners(run.signal)).toBe(20 * 5 + 10);
  await callWith(2);
  expect(getMaxListeners(run.signal)).toBe(20 * 5 + 10);
  await callWith(1000);
  expect(getMaxListeners(run.signal)).toBe(MAX_CONCURRENT_CALLS * 5 + 10);
});
