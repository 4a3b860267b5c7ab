import { afterEach, beforeAll, beforeEach, describe, expect, jest, test } from "@jest/globals";
import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { baseEnv, collect, NOBODY, PROJECT_ROOT, RUNNING_AS_ROOT, TSX_LOADER, type CliResult } from "../helpers/cli.js";
import { requireBubblewrap } from "../helpers/bubblewrap.js";
import { stateFolderName } from "../../src/memory/state-dir.js";

/**
 * Attack: another local user on the same machine prepares the shared places mini-cursor uses
 * (the temporary folder, a shared state home) before you run it. Nothing of theirs may be
 * trusted, followed or deleted. Run as root and as an ordinary user (nobody), with a third uid
 * as the attacker; the CLI runs for real, with bubblewrap, on the offline model.
 */

jest.setTimeout(180_000);

/** The other local user: any uid that is neither root nor the ordinary test user. */
const ATTACKER = 40_123;
/** Above the kernel's PID_MAX_LIMIT (4194304): no live process has it, so a folder named for it is stale. */
const DEAD_PID = 4_194_305;

const victims: Array<[string, number | undefined]> = RUNNING_AS_ROOT
  ? [
      ["root", undefined],
      ["nobody", NOBODY],
    ]
  : [["this user", undefined]];

let base: string;

beforeAll(requireBubblewrap);

beforeEach(() => {
  base = mkdtempSync("/var/tmp/mini-cursor-other-users-");
  chmodSync(base, 0o755);
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

/** A folder `uid` owns (mode 755). */
function folderOf(uid: number | undefined, ...parts: string[]): string {
  const dir = path.join(base, ...parts);
  mkdirSync(dir, { recursive: true });
  if (uid !== undefined) chownSync(dir, uid, uid);
  return dir;
}

/** The CLI as `uid` (setpriv), with exactly the environment given. */
function runAs(uid: number | undefined, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliResult> {
  const node = [process.execPath, "--import", TSX_LOADER, path.join(PROJECT_ROOT, "src", "cli.ts"), ...args];
  const [file, ...argv] =
    uid === undefined ? node : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...node];
  const child = spawn(file!, argv, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  child.stdin.end();
  return collect(child, 150_000);
}

describe.each(victims)("as %s", (_name, victim) => {
  test("stale sandbox folders another user planted in the temporary folder are neither followed nor deleted, and do not stop commands", async () => {
    const tmp = folderOf(undefined, "shared-tmp");
    chmodSync(tmp, 0o1777);
    const precious = folderOf(victim, "precious");
    writeFileSync(path.join(precious, "keep.txt"), "mine\n");
    // A folder named as a dead session's, the attacker's, open to all, with a link into the victim's files.
    const linked = path.join(tmp, `mini-cursor-sandbox-${DEAD_PID}-aaaaaa`);
    mkdirSync(linked);
    symlinkSync(precious, path.join(linked, "link"));
    lchownSync(path.join(linked, "link"), ATTACKER, ATTACKER);
    chownSync(linked, ATTACKER, ATTACKER);
    chmodSync(linked, 0o777);
    // The whole name a link to the victim's folder.
    const named = path.join(tmp, `mini-cursor-sandbox-${DEAD_PID}-bbbbbb`);
    symlinkSync(precious, named);
    lchownSync(named, ATTACKER, ATTACKER);
    // One the victim cannot empty (as an ordinary user): the attacker's, with a file in it.
    const stuck = path.join(tmp, `mini-cursor-sandbox-${DEAD_PID}-cccccc`);
    mkdirSync(stuck);
    writeFileSync(path.join(stuck, "held"), "x");
    chownSync(path.join(stuck, "held"), ATTACKER, ATTACKER);
    chownSync(stuck, ATTACKER, ATTACKER);
    chmodSync(stuck, 0o755);
    const workspace = folderOf(victim, "ws");
    const home = folderOf(victim, "home");
    const state = folderOf(victim, "state");

    const env = baseEnv({ TMPDIR: tmp, HOME: home, MINI_CURSOR_STATE_HOME: state });
    for (const run of [1, 2]) {
      const r = await runAs(
        victim,
        ["--workspace", workspace, "--sandbox", "on", "--approval", "full-auto", `run \`echo run${run} > out.txt\``],
        env,
        workspace,
      );
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(readFileSync(path.join(workspace, "out.txt"), "utf8")).toBe(`run${run}\n`);
    }
    expect(readFileSync(path.join(precious, "keep.txt"), "utf8")).toBe("mine\n");
    expect(readdirSync(linked)).toEqual(["link"]);
    expect(readdirSync(named)).toEqual(["keep.txt"]);
    expect(readdirSync(stuck)).toEqual(["held"]);
    // The victim's own sessions are gone with the runs (tsx keeps its cache there too).
    expect(
      readdirSync(tmp)
        .filter((n) => n.startsWith("mini-cursor-sandbox-"))
        .sort(),
    ).toEqual([path.basename(linked), path.basename(named), path.basename(stuck)]);
  });

  test("a state folder another user made in advance under a shared state home is refused, never used", async () => {
    const shared = folderOf(undefined, "shared-state");
    chmodSync(shared, 0o1777);
    const workspace = folderOf(victim, "ws");
    const home = folderOf(victim, "home");
    // The attacker predicts the names: the workspaces folder, and this workspace's folder in it.
    const planted = path.join(shared, "workspaces", stateFolderName(workspace));
    mkdirSync(planted, { recursive: true });
    for (const dir of [path.dirname(planted), planted]) {
      chownSync(dir, ATTACKER, ATTACKER);
      chmodSync(dir, 0o777);
    }
    const r = await runAs(
      victim,
      ["--workspace", workspace, "--approval", "full-auto", "create a file a.txt with hello"],
      baseEnv({ HOME: home, MINI_CURSOR_STATE_HOME: shared }),
      workspace,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(shared, "workspaces")} belongs to another user (uid ${ATTACKER}), so whoever made it could read or change your conversations`,
    );
    expect(r.stderr).toContain("set MINI_CURSOR_STATE_HOME to a folder of your own");
    expect(readdirSync(planted)).toEqual([]);
    expect(existsSync(path.join(workspace, "a.txt"))).toBe(false);
  });

  test("a state home that is another user's link, in a shared folder, is refused even when it points to a folder of one's own", async () => {
    const shared = folderOf(undefined, "tmp");
    chmodSync(shared, 0o1777);
    const workspace = folderOf(victim, "ws");
    const home = folderOf(victim, "home");
    const mine = folderOf(victim, "home", "state");
    // The attacker's link passes for the victim's folder now, and could be pointed at theirs later.
    const link = path.join(shared, "mc");
    symlinkSync(mine, link);
    lchownSync(link, ATTACKER, ATTACKER);
    const r = await runAs(
      victim,
      ["--workspace", workspace, "--approval", "full-auto", "create a file a.txt with hello"],
      baseEnv({ HOME: home, MINI_CURSOR_STATE_HOME: link }),
      workspace,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${link} belongs to another user (uid ${ATTACKER})`);
    expect(readdirSync(mine)).toEqual([]);
    expect(existsSync(path.join(workspace, "a.txt"))).toBe(false);
  });

  test("a state folder of one's own that others could read is made private before anything is kept in it", async () => {
    const state = folderOf(victim, "state");
    const workspace = folderOf(victim, "ws");
    const mine = path.join(state, "workspaces", stateFolderName(workspace));
    mkdirSync(mine, { recursive: true });
    for (const dir of [path.dirname(mine), mine]) {
      if (victim !== undefined) chownSync(dir, victim, victim);
      chmodSync(dir, 0o755);
    }
    const r = await runAs(
      victim,
      ["--workspace", workspace, "--approval", "full-auto", "create a file a.txt with hello"],
      baseEnv({ HOME: folderOf(victim, "home"), MINI_CURSOR_STATE_HOME: state }),
      workspace,
    );
    expect(r.code).toBe(0);
    for (const dir of [path.dirname(mine), mine, path.join(mine, "snapshots")])
      expect((statSync(dir).mode & 0o777).toString(8)).toBe("700");
  });
});
