import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { protectedPathReason } from "../../src/policy/protected-paths.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

const GIT = (via: string) => `changes a git repository's own files (${via}), where git hooks and settings run programs`;

test("protected paths: any .git, a bare repository, the rules files and .mini-cursor/, also through symlinks", async () => {
  mkdirSync(path.join(tmp.dir, "a", "b"), { recursive: true });
  const reason = (p: string) => protectedPathReason(tmp.dir, p);
  expect(await reason(".git/config")).toBe(GIT(".git/config"));
  expect(await reason("a/b/.git/hooks/pre-commit")).toBe(GIT("a/b/.git/hooks/pre-commit"));
  expect(await reason("a/.GIT/config")).toBe(GIT("a/.GIT/config"));
  expect(await reason("a/.git")).toBe(GIT("a/.git"));
  expect(await reason("./a/../.git/config")).toBe(GIT("./a/../.git/config"));
  expect(await reason("mini-cursor.config.json")).toBe("changes the project's command rules (mini-cursor.config.json)");
  expect(await reason("a/.mini-cursor/config.json")).toBe(
    "changes the project's command rules (a/.mini-cursor/config.json)",
  );
  expect(await reason(".mini-cursor/state.sqlite")).toBe(
    "changes mini-cursor's own files (.mini-cursor/state.sqlite), where its state and saved answers live",
  );
  // Through a symlink to a git directory.
  mkdirSync(path.join(tmp.dir, ".git"));
  symlinkSync(".git", path.join(tmp.dir, "link"));
  expect(await reason("link/config")).toBe(GIT("link/config is .git/config"));
  // A bare repository is a git directory by its content.
  execFileSync("git", ["init", "-q", "--bare", path.join(tmp.dir, "shipped")]);
  expect(await reason("shipped/config")).toBe(GIT("shipped/config"));
  expect(await reason("shipped/hooks/post-index-change")).toBe(GIT("shipped/hooks/post-index-change"));
  // Ordinary files are not protected.
  for (const p of ["src/a.ts", "a/b/git.txt", "a/.gitignore", ".github/workflows/ci.yml", "config"])
    expect([p, await reason(p)]).toEqual([p, undefined]);
});
