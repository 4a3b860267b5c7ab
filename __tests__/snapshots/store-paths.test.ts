import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { snapshotStore } from "../../src/snapshots/store.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 30, item 3: an edit step's snapshot looks at the paths the step declares and nothing
 * else; the rest stays as the whole snapshot before it had it.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

test("a snapshot of declared paths records them (written, new, deleted) and nothing else", async () => {
  const ws = path.join(tmp.dir, "ws");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  const put = (rel: string, text: string) => writeFileSync(path.join(ws, rel), text);
  put("src/a.ts", "a1\n");
  put("src/b.ts", "b1\n");
  put("gone.txt", "bye\n");
  put(".gitignore", "dist/\n");
  mkdirSync(path.join(ws, "dist"));
  put("dist/out.js", "built\n");
  const store = snapshotStore(ws);
  const whole = await store.take();
  // Changed on disk but not declared: left as the whole snapshot had it.
  put("src/b.ts", "b2 by the person\n");
  put("src/a.ts", "a2 by the edit\n");
  put("src/new.ts", "new\n");
  rmSync(path.join(ws, "gone.txt"));
  put("dist/out.js", "rebuilt\n");
  const partial = await store.take(["src/a.ts", "src/new.ts", "gone.txt", "dist/out.js", "no/such/file"]);
  expect((await store.changes(whole, partial)).map((c) => [c.status, c.path])).toEqual([
    ["D", "gone.txt"],
    ["M", "src/a.ts"],
    ["A", "src/new.ts"],
  ]);
  // A whole snapshot afterwards sees the rest too, and still never the ignored folder.
  const again = await store.take();
  expect((await store.changes(partial, again)).map((c) => [c.status, c.path])).toEqual([["M", "src/b.ts"]]);
});
