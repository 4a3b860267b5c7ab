import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { classifyCall } from "../src/agent/approval.js";
import { loadShellParser } from "../src/security/shell-parse.js";
import { APPROVAL_MODES } from "../src/settings.js";
import { TABLE, type Kind } from "./helpers/command-table.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Every command of the table through the classifier (classifyCall, as both engines use it) in
 * every approval mode. R runs unasked everywhere, M asks in suggest and auto-edit, D asks in
 * every mode and no "always" covers it.
 */

/** What each kind does in each mode. */
const EXPECTED: Record<Kind, Record<(typeof APPROVAL_MODES)[number], "run" | "ask">> = {
  R: { suggest: "run", "auto-edit": "run", "full-auto": "run" },
  M: { suggest: "ask", "auto-edit": "ask", "full-auto": "run" },
  D: { suggest: "ask", "auto-edit": "ask", "full-auto": "ask" },
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
    const decision = await classifyCall({ name: "execute_command", args: { command } }, mode, [], { workspace: tmp.dir, home });
    got[mode] = decision.action;
    alwaysAsks ||= decision.alwaysAsks;
  }
  expect({ command, ...got, alwaysAsks }).toEqual({ command, ...EXPECTED[kind], alwaysAsks: kind === "D" });
});
