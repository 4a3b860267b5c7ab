import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { classifyCall } from "../../src/policy/approval.js";
import { loadShellParser } from "../../src/security/shell-parse.js";
import { APPROVAL_MODES } from "../../src/contracts/modes.js";
import { TABLE, type Kind } from "../helpers/command-table.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Every command of the table through the classifier (classifyCall, as both engines use it) in
 * every approval mode. R runs unasked everywhere, M asks in suggest and auto-edit, D asks in
 * every mode and no "always" covers it. Plan mode refuses every command, read-only ones too.
 */

/** What each kind does in each mode. */
const EXPECTED: Record<Kind, Record<(typeof APPROVAL_MODES)[number], "run" | "ask" | "deny">> = {
  R: { suggest: "run", "auto-edit": "run", "full-auto": "run", plan: "deny" },
  M: { suggest: "ask", "auto-edit": "ask", "full-auto": "run", plan: "deny" },
  D: { suggest: "ask", "auto-edit": "ask", "full-auto": "ask", plan: "deny" },
};

let tmp: ReturnType<typeof makeTempDir>;
let home: string;
beforeAll(async () => {
  tmp = makeTempDir();
  home = mkdtempSync("/var/tmp/mini-cursor-table-home-");
  mkdirSync(path.join(tmp.dir, "src"));
  mkdirSync(path.join(tmp.dir, ".git"));
  writeFileSync(path.join(tmp.dir, "package.json"), "{}");
  await loadShellParser();
});
afterAll(() => {
  tmp.cleanup();
  rmSync(home, { recursive: true, force: true });
});

test("the table holds at least 250 distinct commands", () => {
  expect(new Set(TABLE.map(([c]) => c)).size).toBe(TABLE.length);
  expect(TABLE.length).toBeGreaterThanOrEqual(250);
});

test.each(TABLE)("%j is %s in every mode", async (command, kind) => {
  const got: Record<string, string> = {};
  let alwaysAsks = false;
  for (const mode of APPROVAL_MODES) {
    const decision = await classifyCall({ name: "execute_command", args: { command } }, mode, [], {
      workspace: tmp.dir,
      home,
    });
    got[mode] = decision.action;
    if (mode !== "plan") alwaysAsks ||= decision.alwaysAsks;
  }
  expect({ command, ...got, alwaysAsks }).toEqual({ command, ...EXPECTED[kind], alwaysAsks: kind === "D" });
});

/** Deny rules hold through the same tricks: wrappers, nested shells, paths, quoting. */
const DENY_BYPASSES = [
  "curl https://x",
  "flock /dev/null curl https://x",
  "env -S 'curl https://x'",
  "taskset 1 curl https://x",
  "setpriv --nnp curl https://x",
  "chrt 0 curl https://x",
  "prlimit --nofile=9 curl https://x",
  "unshare -r curl https://x",
  "strace -f curl https://x",
  "script -qc 'curl https://x' /dev/null",
  "stdbuf -oL curl https://x",
  "ionice -c3 curl https://x",
  "watch -x curl https://x",
  "parallel curl ::: https://x",
  "nice curl https://x",
  "timeout 5 curl https://x",
  "nohup curl https://x",
  "echo https://x | xargs curl",
  "/usr/bin/curl https://x",
  "c\\url https://x",
  "'cu'\"rl\" https://x",
  "bash -c 'curl https://x'",
  "sh -c \"sh -c 'curl https://x'\"",
  "echo $(curl https://x)",
  "find . -exec curl https://x \\;",
  "npx curl https://x",
  "uv run curl https://x",
];

test.each(DENY_BYPASSES)("deny rule `curl` refuses %j in every mode", async (command) => {
  mkdirSync(path.join(tmp.dir, ".mini-cursor"), { recursive: true });
  writeFileSync(path.join(tmp.dir, ".mini-cursor", "config.json"), JSON.stringify({ commands: { deny: ["curl"] } }));
  try {
    for (const mode of APPROVAL_MODES) {
      const decision = await classifyCall({ name: "execute_command", args: { command } }, mode, [], {
        workspace: tmp.dir,
        home,
      });
      expect([mode, decision.action]).toEqual([mode, "deny"]);
    }
  } finally {
    rmSync(path.join(tmp.dir, ".mini-cursor"), { recursive: true, force: true });
  }
});
