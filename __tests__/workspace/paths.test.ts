import { linkSync, mkdirSync, readdirSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import {
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  PathError,
  displayPath,
  isInside,
  openWorkspace,
  resolvePath,
  type PathErrorCode,
  type ResolveOptions,
  type Workspace,
} from "../../src/workspace/paths.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Layout (everything under one temp dir BASE):
 *   BASE/ws/                 the workspace root (ROOT)
 *   BASE/ws2/x               a sibling whose name has ROOT as a string prefix
 *   BASE/outside/secret.txt  an outside file (same filesystem, so it can be hard-linked)
 *   BASE/wslink -> ws        the workspace reached through a symlink
 */
let tmp: { dir: string; cleanup: () => void };
let BASE = "";
let ROOT = "";
let OUTSIDE = "";
let ws: Workspace;
let outsideBefore: string[] = [];

beforeAll(async () => {
  tmp = makeTempDir("mini-cursor-paths-");
  BASE = tmp.dir;
  ROOT = path.join(BASE, "ws");
  OUTSIDE = path.join(BASE, "outside");
  mkdirSync(ROOT);
  mkdirSync(path.join(BASE, "ws2"));
  writeFileSync(path.join(BASE, "ws2", "x"), "sibling");
  mkdirSync(OUTSIDE);
  writeFileSync(path.join(OUTSIDE, "secret.txt"), "secret");
  symlinkSync(ROOT, path.join(BASE, "wslink"));

  const r = (p: string) => path.join(ROOT, p);
  writeFileSync(r("file.txt"), "hello");
  mkdirSync(r("sub"));
  writeFileSync(r("sub/inner.txt"), "inner");
  mkdirSync(r("foo/bar"), { recursive: true });
  mkdirSync(r("foo/baz"));
  writeFileSync(r("..foo"), "dots");
  writeFileSync(r("with space.txt"), "space");
  writeFileSync(r("ünïcødé 日本.txt"), "unicode");
  writeFileSync(r("back\\slash.txt"), "backslash");

  // Symlinks that leave the workspace.
  symlinkSync("/etc", r("etclink"));
  symlinkSync("..", r("uplink"));
  symlinkSync("link2", r("link1"));
  symlinkSync("/etc", r("link2"));
  symlinkSync(path.join(OUTSIDE, "secret.txt"), r("outfile"));
  symlinkSync("../outside/secret.txt", r("relout"));
  symlinkSync(path.join(OUTSIDE, "nonexistent.txt"), r("dangle"));
  symlinkSync(path.join(OUTSIDE, "nowhere-dir"), r("outlink"));
  symlinkSync("/proc/self/root", r("procroot"));
  symlinkSync(path.join(BASE, "ws2"), r("siblink"));
  // Symlinks that stay inside.
  symlinkSync("in2", r("in1"));
  symlinkSync("sub", r("in2"));
  symlinkSync("sub/inner.txt", r("inlink"));
  symlinkSync("sub/created.txt", r("newlink"));
  symlinkSync(ROOT, r("selflink"));
  // A loop.
  symlinkSync("loopb", r("loopa"));
  symlinkSync("loopa", r("loopb"));
  // Hard links.
  linkSync(path.join(OUTSIDE, "secret.txt"), r("hardout"));
  writeFileSync(r("hardin1"), "twin");
  linkSync(r("hardin1"), r("hardin2"));

  outsideBefore = readdirSync(OUTSIDE).sort();
  ws = await openWorkspace(ROOT);
});

afterAll(() => tmp?.cleanup());

type Expected =
  | { ok: string; exists?: boolean; dir?: boolean }
  | { err: PathErrorCode; outside?: boolean; includes?: string };

/** `$ROOT`, `$BASE` and `$OUTSIDE` are replaced once the temp dir exists. */
function expand(p: string): string {
  return p.replaceAll("$ROOT", ROOT).replaceAll("$BASE", BASE).replaceAll("$OUTSIDE", OUTSIDE);
}

const OUT = { err: "outside", outside: true } as const;
const INVALID = { err: "invalid" } as const;

const cases: Array<[string, string, ResolveOptions, Expected]> = [
  // --- lexical escapes
  ["parent", "../x", {}, OUT],
  ["double parent to passwd", "../../etc/passwd", {}, OUT],
  ["dotdot alone", "..", {}, OUT],
  ["absolute outside", "/etc/passwd", {}, OUT],
  ["filesystem root", "/", {}, OUT],
  ["climb past root", "a/../../x", {}, OUT],
  ["dot then climb", "./a/../..", {}, OUT],
  ["deep climb back to sibling", "sub/../../ws2/x", {}, OUT],
  ["absolute sibling with root as string prefix", "$ROOT" + "2/x", {}, OUT],
  ["absolute outside dir in temp", "$OUTSIDE/secret.txt", {}, OUT],
  // --- home directory
  ["tilde", "~", {}, OUT],
  ["tilde slash", "~/x", {}, OUT],
  ["tilde user", "~root/x", {}, OUT],
  // --- /proc magic links
  ["proc self root", "/proc/self/root/etc/passwd", {}, OUT],
  ["proc self cwd parent", "/proc/self/cwd/..", {}, OUT],
  ["link to /proc/self/root", "procroot/etc/passwd", {}, OUT],
  // --- symlinks leaving the workspace
  ["symlink to /etc", "etclink", {}, OUT],
  ["file through symlink to /etc", "etclink/passwd", { mustExist: true }, OUT],
  ["symlink to parent dir", "uplink", {}, OUT],
  ["through symlink to parent dir", "uplink/outside/secret.txt", {}, OUT],
  ["chain link1->link2->/etc", "link1/passwd", {}, OUT],
  ["chain itself", "link1", {}, OUT],
  ["file symlink outside (absolute)", "outfile", {}, OUT],
  ["file symlink outside (relative)", "relout", {}, OUT],
  ["dangling symlink outside as a new file", "dangle", {}, OUT],
  ["dangling symlink in parent of new file", "outlink/new/file.txt", {}, OUT],
  ["dangling symlink dir itself", "outlink", {}, OUT],
  ["symlink to sibling with prefix name", "siblink/x", {}, OUT],
  ["outside file symlink used as dir", "outfile/x", {}, OUT],
  // --- symlinks staying inside
  ["chain ending inside", "in1", { directory: true }, { ok: "sub", exists: true, dir: true }],
  ["file through inside chain", "in1/inner.txt", { mustExist: true }, { ok: "sub/inner.txt", exists: true }],
  ["file symlink inside", "inlink", {}, { ok: "sub/inner.txt", exists: true }],
  ["dangling symlink inside as new file", "newlink", {}, { ok: "sub/created.txt", exists: false }],
  ["symlink to root itself", "selflink/file.txt", {}, { ok: "file.txt", exists: true }],
  // `..` is applied to the text before any symlink is followed, so this names ROOT/file.txt.
  ["dotdot after outside symlink stays lexical", "etclink/../file.txt", {}, { ok: "file.txt", exists: true }],
  // --- loops
  ["symlink loop", "loopa", {}, INVALID],
  ["symlink loop as parent", "loopa/new.txt", {}, INVALID],
  // --- accepted ordinary paths
  ["root as dot", ".", { directory: true }, { ok: ".", exists: true, dir: true }],
  ["root as ./", "./", {}, { ok: ".", exists: true, dir: true }],
  ["absolute root", "$ROOT", {}, { ok: ".", exists: true, dir: true }],
  ["absolute inside", "$ROOT/sub/inner.txt", {}, { ok: "sub/inner.txt", exists: true }],
  ["absolute inside with dotdot", "$ROOT/sub/../file.txt", {}, { ok: "file.txt", exists: true }],
  ["relative file", "file.txt", { mustExist: true }, { ok: "file.txt", exists: true }],
  ["dot and dotdot inside", "foo/./bar/../baz", { directory: true }, { ok: "foo/baz", exists: true, dir: true }],
  ["name starting with two dots", "..foo", { mustExist: true }, { ok: "..foo", exists: true }],
  ["new name starting with two dots", "sub/..bar", {}, { ok: "sub/..bar", exists: false }],
  ["name with spaces", "with space.txt", { mustExist: true }, { ok: "with space.txt", exists: true }],
  ["unicode name", "ünïcødé 日本.txt", { mustExist: true }, { ok: "ünïcødé 日本.txt", exists: true }],
  [
    "backslash name (literal on POSIX)",
    "back\\slash.txt",
    { mustExist: true },
    { ok: "back\\slash.txt", exists: true },
  ],
  ["backslash dotdot is a literal name", "..\\..\\etc\\passwd", {}, { ok: "..\\..\\etc\\passwd", exists: false }],
  ["new file in new dir", "new/dir/file.ts", {}, { ok: "new/dir/file.ts", exists: false }],
  ["trailing slash dir", "sub/", {}, { ok: "sub", exists: true, dir: true }],
  ["double slashes", "sub//inner.txt", {}, { ok: "sub/inner.txt", exists: true }],
  [
    "component of exactly NAME_MAX",
    "n".repeat(MAX_NAME_LENGTH),
    {},
    { ok: "n".repeat(MAX_NAME_LENGTH), exists: false },
  ],
  // --- malformed
  ["empty", "", {}, INVALID],
  ["whitespace only", "   ", {}, INVALID],
  ["NUL byte", "file.txt\0.png", {}, { err: "invalid", includes: "NUL" }],
  ["NUL byte hiding a climb", "ok\0/../../etc/passwd", {}, INVALID],
  ["5000-char path", "a/".repeat(2500), {}, INVALID],
  ["300-char component", "x".repeat(300), {}, INVALID],
  ["300-byte unicode component", "日".repeat(100), {}, INVALID],
  ["long component after a slash", "sub/" + "y".repeat(256), {}, INVALID],
  // --- hard links
  ["hard link to outside file", "hardout", { refuseHardLinks: true }, { err: "hard_link", outside: true }],
  ["hard link pair inside", "hardin1", { refuseHardLinks: true }, { err: "hard_link", outside: true }],
  ["hard link allowed without the option", "hardin2", {}, { ok: "hardin2", exists: true }],
  ["single-link file with refuseHardLinks", "file.txt", { refuseHardLinks: true }, { ok: "file.txt", exists: true }],
  ["directory with refuseHardLinks", "sub", { refuseHardLinks: true }, { ok: "sub", exists: true, dir: true }],
  // --- existence and kind
  ["mustExist on missing file", "missing.txt", { mustExist: true }, { err: "not_found" }],
  ["directory on missing path", "missing-dir", { directory: true }, { err: "not_found" }],
  ["directory option on a file", "file.txt", { directory: true }, { err: "not_directory" }],
  ["file used as a directory", "file.txt/x", {}, { err: "not_directory" }],
  ["file used as a directory, deeper", "file.txt/x/y.txt", {}, { err: "not_directory" }],
  ["missing without mustExist", "missing.txt", {}, { ok: "missing.txt", exists: false }],
];

describe("resolvePath adversarial table", () => {
  test.each(cases)("%s: %j", async (_name, rawPath, options, expected) => {
    const userPath = expand(rawPath);
    if ("ok" in expected) {
      const res = await resolvePath(ws, userPath, options);
      expect(res.display).toBe(expected.ok);
      expect(res.absolute).toBe(expected.ok === "." ? ROOT : path.join(ROOT, expected.ok));
      expect(isInside(ROOT, res.absolute)).toBe(true);
      if (expected.exists !== undefined) expect(res.exists).toBe(expected.exists);
      expect(res.isDirectory).toBe(expected.dir ?? false);
    } else {
      let caught: unknown;
      try {
        await resolvePath(ws, userPath, options);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(PathError);
      const err = caught as PathError;
      expect(err.code).toBe(expected.err);
      if (expected.outside) expect(err.message).toContain("outside the workspace");
      else expect(err.message).not.toContain("outside the workspace");
      if (expected.includes) expect(err.message).toContain(expected.includes);
      // A refusal never echoes a resolved outside location back to the model.
      if (!userPath.includes(OUTSIDE)) expect(err.message).not.toContain(OUTSIDE);
    }
  });

  test("the table is big enough", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  test("a path longer than PATH_MAX once joined to the root is refused", async () => {
    const userPath = "d/".repeat(Math.floor((MAX_PATH_LENGTH - 2) / 2)) + "f";
    expect(userPath.length).toBeLessThanOrEqual(MAX_PATH_LENGTH);
    await expect(resolvePath(ws, userPath)).rejects.toMatchObject({ code: "invalid" });
  });

  test("nothing outside the root was created or removed", () => {
    expect(readdirSync(OUTSIDE).sort()).toEqual(outsideBefore);
    expect(existsSync(path.join(OUTSIDE, "nowhere-dir"))).toBe(false);
    expect(existsSync(path.join(OUTSIDE, "nonexistent.txt"))).toBe(false);
  });
});

describe("openWorkspace", () => {
  test("a root reached through a symlink is resolved to the real directory", async () => {
    const linked = await openWorkspace(path.join(BASE, "wslink"));
    expect(linked.root).toBe(ROOT);
    const res = await resolvePath(linked, "sub/inner.txt", { mustExist: true });
    expect(res.absolute).toBe(path.join(ROOT, "sub/inner.txt"));
    expect(res.display).toBe("sub/inner.txt");
    await expect(resolvePath(linked, "../outside/secret.txt")).rejects.toMatchObject({ code: "outside" });
  });

  test("absolute paths spelled through the symlinked root are accepted", async () => {
    const linked = await openWorkspace(path.join(BASE, "wslink"));
    const res = await resolvePath(linked, path.join(BASE, "wslink", "file.txt"), { mustExist: true });
    expect(res.absolute).toBe(path.join(ROOT, "file.txt"));
    expect(res.display).toBe("file.txt");
    const root = await resolvePath(linked, path.join(BASE, "wslink"));
    expect(root.display).toBe(".");
    // The alias does not open a way out.
    await expect(resolvePath(linked, path.join(BASE, "wslink", "..", "outside", "secret.txt"))).rejects.toMatchObject({
      code: "outside",
    });
    await expect(resolvePath(linked, path.join(BASE, "wslink", "etclink", "passwd"))).rejects.toMatchObject({
      code: "outside",
    });
  });

  test("a missing directory or a file is rejected", async () => {
    await expect(openWorkspace(path.join(BASE, "nope"))).rejects.toThrow("does not exist");
    await expect(openWorkspace(path.join(ROOT, "file.txt"))).rejects.toThrow("not a directory");
  });
});

describe("isInside and displayPath", () => {
  test.each([
    ["/tmp/ws", "/tmp/ws", true],
    ["/tmp/ws", "/tmp/ws/a", true],
    ["/tmp/ws", "/tmp/ws/..foo", true],
    ["/tmp/ws", "/tmp/ws/a/..b", true],
    ["/tmp/ws", "/tmp/ws2/x", false],
    ["/tmp/ws", "/tmp/ws2", false],
    ["/tmp/ws", "/tmp", false],
    ["/tmp/ws", "/tmp/other", false],
    ["/tmp/ws", "/", false],
  ])("isInside(%s, %s) is %s", (root, candidate, expected) => {
    expect(isInside(root, candidate)).toBe(expected);
  });

  test("displayPath is relative, '.' for the root", () => {
    const w = { root: "/tmp/ws" };
    expect(displayPath(w, "/tmp/ws")).toBe(".");
    expect(displayPath(w, "/tmp/ws/a/b.txt")).toBe("a/b.txt");
  });
});
