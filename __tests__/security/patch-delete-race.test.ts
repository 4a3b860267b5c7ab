import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import { attackPatchDelete, preparePatchDeleteRace, PRECIOUS } from "../helpers/patch-delete-race.js";
import { prepareRace } from "../helpers/race-attack.js";
import { asUser, skipUnlessReachable } from "../helpers/as-user.js";
import { NOBODY } from "../helpers/cli.js";

/**
 * Attack: apply_patch's "*** Delete File" while a process in the workspace swaps the folder the
 * file is in with a symlink to a folder outside (renameat2 exchange). The delete goes through the
 * verified folder's descriptor, so the file outside with the same name survives every round.
 */

const ROUNDS = 250;
let base: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  base = mkdtempSync("/var/tmp/mini-cursor-patch-delete-");
  chmodSync(base, 0o755);
  workspace = path.join(base, "ws");
  outside = path.join(base, "outside");
  spawnSync("mkdir", [workspace, outside]);
  prepareRace(workspace, outside);
  preparePatchDeleteRace(workspace, outside);
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

it("a delete raced with a folder swap never deletes the file outside the workspace", async () => {
  const findings = await attackPatchDelete(
    createTools({ workspace, env: { PATH: process.env.PATH } }),
    workspace,
    outside,
    ROUNDS,
  );
  expect(findings.outsideIntact).toBe(true);
  // The attack was real: deletes of the decoy went through while the folders were swapping.
  expect(findings.deleted).toBeGreaterThan(0);
  expect(readFileSync(path.join(outside, "secret", "victim.txt"), "utf8")).toBe(`${PRECIOUS}\n`);
}, 120_000);

it("as an ordinary user (nobody), the same race deletes nothing outside", () => {
  if (process.getuid?.() !== 0) {
    console.warn("patch-delete-race: not root, so the run as nobody through setpriv is skipped");
    return;
  }
  if (skipUnlessReachable(NOBODY, "patch-delete-race as nobody")) return;
  spawnSync("chown", ["-R", "65534:65534", workspace, outside]);
  const script = path.join(process.cwd(), "__tests__", "helpers", "patch-delete-race-run.ts");
  const tsx = path.join(process.cwd(), "node_modules", ".bin", "tsx");
  const run = spawnSync(...asUser(NOBODY, [tsx, script, workspace, outside, String(ROUNDS)]), {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: base },
    timeout: 110_000,
  });
  expect(run.stderr).toBe("");
  expect(JSON.parse(run.stdout)).toEqual({ uid: 65534, outsideIntact: true });
  expect(readFileSync(path.join(outside, "secret", "victim.txt"), "utf8")).toBe(`${PRECIOUS}\n`);
}, 120_000);
