import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { bubblewrapArgs, createSandbox, type Sandbox } from "../../src/security/sandbox.js";
import { createToolContext, type ToolContext } from "../../src/tools/context.js";
import { executeCommand } from "../../src/tools/execute-command.js";
import { createProcessRegistry } from "../../src/workspace/processes.js";
import { requireBubblewrap } from "../helpers/bubblewrap.js";

/**
 * Attack: a command run by the agent while mini-cursor itself runs as root (containers, CI)
 * tries to undo the sandbox with root's powers — remount / read-write, unmount the tmpfs that
 * hides ~/.ssh — and to write outside the workspace. The same attack also runs as an ordinary
 * user (nobody, through setpriv) with the same bubblewrap arguments.
 */

const isRoot = process.getuid?.() === 0;
let base: string;
let workspace: string;
let home: string;
let outside: string;
const sandboxes: Sandbox[] = [];
const contexts: ToolContext[] = [];

beforeAll(requireBubblewrap);

beforeEach(() => {
  // /var/tmp: the sandbox's /tmp is private, so an "outside" file there would prove nothing.
  base = mkdtempSync("/var/tmp/mini-cursor-root-");
  chmodSync(base, 0o755);
  workspace = path.join(base, "ws");
  home = path.join(base, "home");
  outside = path.join(base, "outside");
  for (const dir of [workspace, home, outside, path.join(home, ".ssh")]) mkdirSync(dir);
  writeFileSync(path.join(home, ".ssh", "id_rsa"), "THE-PRIVATE-KEY\n");
  writeFileSync(path.join(outside, "keep.txt"), "keep\n");
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.processes.stopAll()));
  for (const s of sandboxes.splice(0)) s.dispose();
  rmSync(base, { recursive: true, force: true });
});

const ATTACK = [
  "mount -o remount,bind,rw / 2>/dev/null && echo REMOUNTED",
  `umount ${"$HOME"}/.ssh 2>/dev/null && echo UNMOUNTED`,
  `cat ${"$HOME"}/.ssh/id_rsa 2>/dev/null`,
  "{ echo pwned > OUTSIDE/keep.txt && echo WROTE; } 2>/dev/null",
  "{ echo pwned > OUTSIDE/new.txt && echo CREATED; } 2>/dev/null",
  "grep CapEff /proc/self/status",
  "echo done",
].join("; ");

function attack(): string {
  return ATTACK.replace(/OUTSIDE/g, outside);
}

function expectContained(output: string): void {
  expect(output).not.toContain("REMOUNTED");
  expect(output).not.toContain("UNMOUNTED");
  expect(output).not.toContain("THE-PRIVATE-KEY");
  expect(output).not.toContain("WROTE");
  expect(output).not.toContain("CREATED");
  expect(output).toContain("CapEff:\t0000000000000000");
  expect(output).toContain("done");
  expect(readFileSync(path.join(outside, "keep.txt"), "utf8")).toBe("keep\n");
  expect(existsSync(path.join(outside, "new.txt"))).toBe(false);
  expect(readFileSync(path.join(home, ".ssh", "id_rsa"), "utf8")).toBe("THE-PRIVATE-KEY\n");
}

(isRoot ? it : it.skip)("as root, a command cannot remount, unmount, read hidden keys or write outside", async () => {
  const sandbox = createSandbox({ workspace, home });
  sandboxes.push(sandbox);
  const ctx = createToolContext(
    { workspace, spawnSpec: sandbox.spawnSpec, env: { PATH: process.env.PATH, HOME: home, LANG: "C.UTF-8" } },
    createProcessRegistry(),
  );
  contexts.push(ctx);
  const output = await executeCommand(ctx, { command: attack() });
  expectContained(output);
  // The workspace itself stays writable.
  expect(await executeCommand(ctx, { command: "echo ok > inside.txt && cat inside.txt" })).toContain("ok");
  expect(readFileSync(path.join(workspace, "inside.txt"), "utf8")).toBe("ok\n");
});

(isRoot ? it : it.skip)("as an ordinary user (setpriv to nobody), the same arguments contain the same attack", () => {
  spawnSync("chown", ["-R", "65534:65534", workspace, home, outside]);
  const tmpDir = path.join(base, "sandbox-tmp");
  mkdirSync(tmpDir, { mode: 0o1777 });
  chmodSync(tmpDir, 0o1777);
  const emptyFile = path.join(base, "empty");
  writeFileSync(emptyFile, "", { mode: 0o444 });
  const args = bubblewrapArgs({ workspace, home, tmpDir, emptyFile }, workspace);
  const run = spawnSync(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", "bwrap", ...args, "--", "bash", "-c", attack()],
    { encoding: "utf8", env: { PATH: process.env.PATH, HOME: home } },
  );
  expect(run.stderr).toBe("");
  expectContained(run.stdout);
});

if (!isRoot) {
  it("needs root to run the attack as root", () => {
    console.warn("security-root: not running as root, so the root attack is skipped (CI runs it as root).");
  });
}
