import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { inToolset } from "../../src/tools/index.js";

type AgentTool = StructuredToolInterface;
import { createToolContext } from "../../src/tools/context.js";
import { writeFileTool } from "../../src/tools/write-file.js";
import { readFileTool } from "../../src/tools/read-file.js";
import type { ToolOptions } from "../../src/tools/context.js";
import { makeTempDir } from "../helpers/tmp.js";

let dir: string;
let cleanup: () => void;
let outside: { dir: string; cleanup: () => void };
let writeFile: AgentTool;
let readFile: AgentTool;

/** write_file and read_file sharing one context (the thread's read tracker). */
function tools(options: Partial<ToolOptions> = {}) {
  const ctx = createToolContext({ workspace: dir, ...options }, {} as never);
  writeFile = inToolset(writeFileTool(ctx));
  readFile = inToolset(readFileTool(ctx));
}

beforeEach(() => {
  ({ dir, cleanup } = makeTempDir());
  outside = makeTempDir("mini-cursor-outside-");
  tools();
});
afterEach(() => {
  cleanup();
  outside.cleanup();
});

const write = async (filePath: string, content: string) => (await writeFile.invoke({ filePath, content })) as string;
const read = async (filePath: string) => (await readFile.invoke({ filePath })) as string;
const contentOf = (name: string) => readFileSync(path.join(dir, name), "utf8");
const outsideMessage = (p: string) =>
  `Refused: "${p}" is outside the workspace. Use a path inside the workspace (relative paths are resolved against its root).`;

describe("write_file", () => {
  it("creates a file and reports lines and bytes", async () => {
    expect(await write("a.txt", "one\ntwo\n")).toBe("Created a.txt (2 lines, 8 bytes).");
    expect(contentOf("a.txt")).toBe("one\ntwo\n");
  });

  it("counts bytes of UTF-8, a last line without newline, and empty content", async () => {
    expect(await write("u.txt", "é")).toBe("Created u.txt (1 line, 2 bytes).");
    expect(await write("e.txt", "")).toBe("Created e.txt (0 lines, 0 bytes).");
    expect(contentOf("e.txt")).toBe("");
  });

  it("replaces a file whole and keeps its mode", async () => {
    writeFileSync(path.join(dir, "run.sh"), "old old old\nold\n");
    chmodSync(path.join(dir, "run.sh"), 0o754);
    await read("run.sh");
    expect(await write("run.sh", "#!/bin/sh\n")).toBe("Replaced run.sh (1 line, 10 bytes).");
    expect(contentOf("run.sh")).toBe("#!/bin/sh\n");
    expect(statSync(path.join(dir, "run.sh")).mode & 0o777).toBe(0o754);
  });

  it("creates missing parent directories", async () => {
    expect(await write("src/deep/er/App.tsx", "export {};\n")).toBe(
      `Created ${path.join("src", "deep", "er", "App.tsx")} (1 line, 11 bytes).`,
    );
    expect(contentOf("src/deep/er/App.tsx")).toBe("export {};\n");
  });

  it("leaves no temporary files behind", async () => {
    await write("x.txt", "1");
    await write("x.txt", "2");
    await write("sub/y.txt", "3");
    expect(readdirSync(dir).sort()).toEqual(["sub", "x.txt"]);
    expect(readdirSync(path.join(dir, "sub"))).toEqual(["y.txt"]);
  });

  it("writes through a symlink inside the workspace to its target", async () => {
    writeFileSync(path.join(dir, "real.txt"), "before\n");
    symlinkSync("real.txt", path.join(dir, "alias.txt"));
    await read("alias.txt");
    expect(await write("alias.txt", "after\n")).toBe("Replaced real.txt (1 line, 6 bytes).");
    expect(contentOf("real.txt")).toBe("after\n");
    expect(lstatSync(path.join(dir, "alias.txt")).isSymbolicLink()).toBe(true);
  });
});

describe("write_file never overwrites content the model has not seen (issue 28)", () => {
  const unread = (p: string, tool = "edit_file") =>
    `Error: ${p} already exists and has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered), so write_file would replace content you have not seen. Read it with read_file first; to change part of it, use ${tool}.`;
  const changed = (p: string) =>
    `Error: ${p} has changed since you last read or wrote it (a command, a formatter or the user changed it), so write_file would overwrite those changes. Read it again with read_file first; to change part of it, use edit_file.`;

  it("refuses to replace a file that was never read, and leaves it as it was", async () => {
    writeFileSync(path.join(dir, "a.txt"), "mine\n");
    expect(await write("a.txt", "yours\n")).toBe(unread("a.txt"));
    expect(contentOf("a.txt")).toBe("mine\n");
    // Read, it may be replaced.
    await read("a.txt");
    expect(await write("a.txt", "yours\n")).toBe("Replaced a.txt (1 line, 6 bytes).");
  });

  it("refuses to replace a file that changed since it was read or written", async () => {
    writeFileSync(path.join(dir, "a.txt"), "one\n");
    await read("a.txt");
    writeFileSync(path.join(dir, "a.txt"), "changed by someone else\n");
    expect(await write("a.txt", "two\n")).toBe(changed("a.txt"));
    expect(contentOf("a.txt")).toBe("changed by someone else\n");
    // What the model wrote itself counts as seen; a change after that does not.
    await read("a.txt");
    expect(await write("a.txt", "three\n")).toBe("Replaced a.txt (1 line, 6 bytes).");
    expect(await write("a.txt", "four\n")).toBe("Replaced a.txt (1 line, 5 bytes).");
    writeFileSync(path.join(dir, "a.txt"), "formatted\n");
    expect(await write("a.txt", "five\n")).toBe(changed("a.txt"));
  });

  it("new and empty files need no read; a read in another thread does not count", async () => {
    writeFileSync(path.join(dir, "empty.txt"), "");
    expect(await write("empty.txt", "x\n")).toBe("Replaced empty.txt (1 line, 2 bytes).");
    writeFileSync(path.join(dir, "b.txt"), "b\n");
    await readFile.invoke({ filePath: "b.txt" }, { configurable: { thread_id: "other" } });
    expect(await write("b.txt", "c\n")).toBe(unread("b.txt"));
  });

  it("points to the edit tool the toolset offers", async () => {
    tools({ editTool: "apply_patch" });
    writeFileSync(path.join(dir, "a.txt"), "a\n");
    expect(await write("a.txt", "b\n")).toBe(unread("a.txt", "apply_patch"));
    expect(writeFile.description).toContain("To change part of a file, use apply_patch (it sends only the change).");
  });
});

describe("write_file refusals", () => {
  it("refuses a directory", async () => {
    mkdirSync(path.join(dir, "src"));
    expect(await write("src", "x")).toBe(
      '"src" is a directory; write_file writes files. Choose a file path inside it.',
    );
  });

  it("refuses a file with several hard links and leaves it alone", async () => {
    writeFileSync(path.join(outside.dir, "target.txt"), "keep\n");
    linkSync(path.join(outside.dir, "target.txt"), path.join(dir, "hard.txt"));
    expect(await write("hard.txt", "changed\n")).toMatch(/^Refused: "hard\.txt" has 2 hard links/);
    expect(readFileSync(path.join(outside.dir, "target.txt"), "utf8")).toBe("keep\n");
  });

  it("refuses a path through a file", async () => {
    writeFileSync(path.join(dir, "a.txt"), "x");
    expect(await write("a.txt/b.txt", "y")).toBe('"a.txt/b.txt" goes through a file as if it were a directory.');
  });

  it.each(["../x.txt", "/etc/passwd", "/tmp/evil.txt"])("refuses %s as outside the workspace", async (p) => {
    expect(await write(p, "pwned")).toBe(outsideMessage(p));
  });

  it("refuses symlinks that lead outside, to files, directories or nowhere yet", async () => {
    writeFileSync(path.join(outside.dir, "file.txt"), "keep\n");
    symlinkSync(path.join(outside.dir, "file.txt"), path.join(dir, "file-link"));
    symlinkSync(outside.dir, path.join(dir, "dir-link"));
    symlinkSync(path.join(outside.dir, "later", "deeper"), path.join(dir, "dangling"));
    symlinkSync("/etc", path.join(dir, "etc"));

    expect(await write("file-link", "x")).toBe(outsideMessage("file-link"));
    expect(await write("dir-link/new.txt", "x")).toBe(outsideMessage("dir-link/new.txt"));
    expect(await write("dangling/new.txt", "x")).toBe(outsideMessage("dangling/new.txt"));
    expect(await write("etc/passwd", "x")).toBe(outsideMessage("etc/passwd"));

    expect(readFileSync(path.join(outside.dir, "file.txt"), "utf8")).toBe("keep\n");
    expect(readdirSync(outside.dir)).toEqual(["file.txt"]);
    expect(existsSync(path.join(outside.dir, "later"))).toBe(false);
  });
});
