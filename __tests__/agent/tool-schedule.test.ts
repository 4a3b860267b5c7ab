import { getMaxListeners } from "node:events";
import {
  accessOf,
  allowConcurrentListeners,
  conflicts,
  MAX_CONCURRENT_CALLS,
  runScheduled,
} from "../../src/agent/tool-schedule.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

test("which calls of a turn wait for which", async () => {
  const ws = tmp.dir;
  const edit = (filePath: string) => accessOf({ name: "edit_file", args: { filePath } }, undefined, ws);
  const read = (filePath: string) => accessOf({ name: "read_file", args: { filePath } }, undefined, ws);
  const list = (directoryPath: string) => accessOf({ name: "list_directory", args: { directoryPath } }, undefined, ws);
  const command = accessOf({ name: "execute_command", args: { command: "ls" } }, undefined, ws);
  const mcp = accessOf({ name: "fs__write", args: { path: "x" } }, [{ name: "fs__write" }], ws);
  expect(conflicts(edit("a.txt"), edit("./a.txt"))).toBe(true);
  expect(conflicts(edit("a.txt"), edit("b.txt"))).toBe(false);
  expect(conflicts(read("a.txt"), read("a.txt"))).toBe(false);
  expect(conflicts(read("a.txt"), edit("a.txt"))).toBe(true);
  expect(conflicts(list("src"), edit("src/x.ts"))).toBe(true);
  expect(conflicts(list("src"), edit("srcx/x.ts"))).toBe(false);
  expect(conflicts(command, read("a.txt"))).toBe(true);
  // The commands of one turn run together (the model chains dependent ones with &&).
  expect(conflicts(command, accessOf({ name: "execute_command", args: { command: "rm x" } }, undefined, ws))).toBe(
    false,
  );
  expect(conflicts(mcp, read("a.txt"))).toBe(true);

  // Order: b waits for a (same path), c runs at once (another path).
  const log: string[] = [];
  let releaseA!: () => void;
  const aDone = new Promise<void>((r) => (releaseA = r));
  const calls = [
    { id: "a", access: edit("f.txt") },
    { id: "b", access: edit("f.txt") },
    { id: "c", access: edit("g.txt") },
  ];
  const all = runScheduled(
    calls,
    (c) => c.access,
    async (c) => {
      log.push(`start ${c.id}`);
      if (c.id === "a") await aDone;
      log.push(`end ${c.id}`);
      return c.id;
    },
  );
  await new Promise((r) => setImmediate(r));
  expect(log).toEqual(["start a", "start c", "end c"]);
  releaseA();
  expect(await all).toEqual(["a", "b", "c"]);
  expect(log).toEqual(["start a", "start c", "end c", "end a", "start b", "end b"]);
});

test("a turn's calls may all listen to the run's signal at once without Node reporting a leak", () => {
  const run = new AbortController();
  expect(getMaxListeners(run.signal)).toBe(10);
  allowConcurrentListeners(run.signal, 20);
  // Four listeners a call (its tool's race, a command's process group, a hook), Node's ten on top.
  expect(getMaxListeners(run.signal)).toBe(20 * 4 + 10);
  allowConcurrentListeners(run.signal, 2);
  expect(getMaxListeners(run.signal)).toBe(20 * 4 + 10);
  allowConcurrentListeners(run.signal, 1000);
  expect(getMaxListeners(run.signal)).toBe(MAX_CONCURRENT_CALLS * 4 + 10);
});
