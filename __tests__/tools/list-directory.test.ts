import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { inToolset } from "../../src/tools/index.js";

type AgentTool = StructuredToolInterface;
import path from "node:path";
import { createToolContext } from "../../src/tools/context.js";
import { listDirectoryTool, MAX_LIST_ENTRIES } from "../../src/tools/list-directory.js";
import { makeTempDir } from "../helpers/tmp.js";

let dir: string;
let cleanup: () => void;
let listDirectory: AgentTool;

beforeEach(() => {
  ({ dir, cleanup } = makeTempDir());
  listDirectory = inToolset(listDirectoryTool(createToolContext({ workspace: dir }, {} as never)));
});
afterEach(() => cleanup());

/** Creates files ("a/b.txt": content) and directories ("a/c/": null). */
const tree = (entries: Record<string, string | null>) => {
  for (const [name, content] of Object.entries(entries)) {
    const abs = path.join(dir, name);
    if (content === null) mkdirSync(abs, { recursive: true });
    else {
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
  }
};
const list = async (directoryPath?: string) =>
  (await listDirectory.invoke(directoryPath === undefined ? {} : { directoryPath })) as string;

describe("list_directory", () => {
  it("lists directories first, then names in order, with kinds and sizes", async () => {
    tree({ "zeta/": null, "Alpha/": null, "b.txt": "x".repeat(1234), "a.md": "hello", _c: "" });
    symlinkSync("a.md", path.join(dir, "link.md"));
    symlinkSync("zeta", path.join(dir, "to-zeta"));
    expect(await list(".")).toBe(
      [
        "Directory . (7 entries):",
        "dir   Alpha/",
        "dir   zeta/",
        "file  _c  0 B",
        "file  a.md  5 B",
        "file  b.txt  1.2 KB",
        "link  link.md -> a.md",
        "link  to-zeta -> zeta (dir)",
      ].join("\n"),
    );
  });

  it("lists the root when no path is given and a subdirectory by its relative path", async () => {
    tree({ "src/main.ts": "main\n" });
    expect(await list()).toBe("Directory . (1 entry):\ndir   src/");
    expect(await list("src")).toBe("Directory src (1 entry):\nfile  main.ts  5 B");
    expect(await list("./src/")).toBe("Directory src (1 entry):\nfile  main.ts  5 B");
  });

  it("lists a file whose name is not UTF-8 as one line that says so, beside the others", async () => {
    tree({ "a.txt": "abc" });
    // "bad\xff.txt": no UTF-8 text names it, so the listing's name (with U+FFFD) opens nothing.
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/bad`), Buffer.from([0xff]), Buffer.from(".txt")]), "x");
    mkdirSync(Buffer.concat([Buffer.from(`${dir}/sub`), Buffer.from([0xfe])]));
    symlinkSync("a.txt", Buffer.concat([Buffer.from(`${dir}/ln`), Buffer.from([0xfe])]));
    expect(await list(".")).toBe(
      [
        "Directory . (4 entries):",
        "dir   sub\uFFFD/",
        "file  a.txt  3 B",
        "file  bad\uFFFD.txt  (name is not valid UTF-8: rename it with a command to work on it)",
        "link  ln\uFFFD  (name is not valid UTF-8: rename it with a command to work on it)",
      ].join("\n"),
    );
  });

  it("says when a directory is empty", async () => {
    tree({ "empty/": null });
    expect(await list("empty")).toBe("Directory empty is empty.");
  });

  it("shows symlinks that point outside or nowhere without following them", async () => {
    symlinkSync("/etc", path.join(dir, "etc"));
    symlinkSync("missing.txt", path.join(dir, "broken"));
    expect(await list(".")).toBe(
      [
        "Directory . (2 entries):",
        "link  broken -> missing.txt (broken link)",
        "link  etc -> /etc (outside the workspace, not followed)",
      ].join("\n"),
    );
  });

  it("caps long listings and says how many were left out", async () => {
    const names = Array.from({ length: MAX_LIST_ENTRIES + 10 }, (_, i) => `f${String(i).padStart(4, "0")}.txt`);
    tree(Object.fromEntries(names.map((n) => [`big/${n}`, "1"])));
    const lines = (await list("big")).split("\n");
    expect(lines[0]).toBe(`Directory big (${MAX_LIST_ENTRIES + 10} entries, showing the first ${MAX_LIST_ENTRIES}):`);
    expect(lines).toHaveLength(MAX_LIST_ENTRIES + 2);
    expect(lines[MAX_LIST_ENTRIES]).toBe(`file  ${names[MAX_LIST_ENTRIES - 1]}  1 B`);
    expect(lines[MAX_LIST_ENTRIES + 1]).toBe(`(10 more not shown; listings stop at ${MAX_LIST_ENTRIES} entries.)`);
  });
});

describe("list_directory and .gitignore", () => {
  it("hides .git and ignored entries and counts them", async () => {
    tree({
      ".git/HEAD": "ref\n",
      ".gitignore": "node_modules/\n*.log\n/dist\n",
      "node_modules/react/index.js": "",
      "dist/": null,
      "debug.log": "x",
      "src/": null,
      "README.md": "# hi\n",
    });
    expect(await list(".")).toBe(
      [
        "Directory . (3 entries):",
        "dir   src/",
        "file  .gitignore  26 B",
        "file  README.md  5 B",
        "(3 entries hidden by .gitignore, and .git)",
      ].join("\n"),
    );
  });

  it("shows node_modules when nothing ignores it", async () => {
    tree({ "node_modules/x/": null, "a.txt": "" });
    expect(await list(".")).toBe("Directory . (2 entries):\ndir   node_modules/\nfile  a.txt  0 B");
  });

  it("matches on paths relative to the root and applies nested .gitignore files, deeper ones winning", async () => {
    tree({
      ".gitignore": "*.log\n/build\nsrc/secret.txt\n",
      "src/.gitignore": "gen/\n!keep.log\n",
      "src/gen/": null,
      "src/build/": null,
      "src/keep.log": "",
      "src/other.log": "",
      "src/secret.txt": "",
      "src/app.ts": "",
    });
    expect(await list("src")).toBe(
      [
        "Directory src (4 entries):",
        "dir   build/",
        "file  .gitignore  15 B",
        "file  app.ts  0 B",
        "file  keep.log  0 B",
        "(3 entries hidden by .gitignore)",
      ].join("\n"),
    );
  });

  it("uses the .gitignore files of every directory on the way down", async () => {
    tree({ "a/.gitignore": "*.tmp\n", "a/b/c/x.tmp": "", "a/b/c/y.txt": "" });
    expect(await list("a/b/c")).toBe("Directory a/b/c (1 entry):\nfile  y.txt  0 B\n(1 entry hidden by .gitignore)");
  });

  it("says when everything is hidden", async () => {
    tree({ ".gitignore": "d/*\n", "d/x": "" });
    expect(await list("d")).toBe("Directory d has no visible entries (1 entry hidden by .gitignore).");
  });

  it("lists an ignored directory in full when asked for it by name", async () => {
    tree({ ".gitignore": "node_modules/\n", "node_modules/react/": null, "node_modules/.bin/": null });
    expect(await list("node_modules")).toBe(
      [
        "Directory node_modules (2 entries):",
        "dir   .bin/",
        "dir   react/",
        "(This directory is ignored by .gitignore; showing all its entries.)",
      ].join("\n"),
    );
  });
});

describe("list_directory refusals", () => {
  it.each(["..", "../x", "/etc", "link-to-etc", "link-to-etc/ssl"])(
    "refuses %s as outside the workspace",
    async (p) => {
      symlinkSync("/etc", path.join(dir, "link-to-etc"));
      expect(await list(p)).toBe(
        `Refused: "${p}" is outside the workspace. Use a path inside the workspace (relative paths are resolved against its root).`,
      );
    },
  );

  it("says when the path is missing or a file", async () => {
    tree({ "a.txt": "" });
    expect(await list("nope")).toBe('"nope" does not exist. List the parent directory to see what is there.');
    expect(await list("a.txt")).toBe('"a.txt" is a file, not a directory.');
  });
});
