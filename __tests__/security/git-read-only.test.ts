import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { classifyCall } from "../../src/policy/approval.js";
import { configIsPlain } from "../../src/security/git-repo.js";
import { baseEnv, NOBODY, RUNNING_AS_ROOT, runCliAs } from "../helpers/cli.js";
import { runsAs, chownTree } from "../helpers/as-user.js";
import { startOpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Read-only means it runs nothing else (issue 25 item 5): a git command is auto-approved as
 * read-only only when the repository it will use names no program in its own files. Canary
 * scripts stand in for what a hostile repository would run; each is first shown to fire when
 * git runs the command directly, then the same command through mini-cursor (auto-edit, no
 * terminal, no sandbox) must ask, and so not run, as root and as uid 65534.
 */

jest.setTimeout(240_000);

const asRoot = RUNNING_AS_ROOT;
/** The CLI's one run of every attack, on a busy machine. */
const CLI_DEADLINE_MS = 150_000;

let tmp: ReturnType<typeof makeTempDir>;
let home: string;
let fired: string;

const gitEnv = () => ({ ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_PAGER: "", PAGER: "" });
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "safe.directory=*", ...args], { cwd, encoding: "utf8", env: gitEnv() });

/** A script that leaves a file named after itself in `fired` and exits 0 (as each hook point expects). */
function canary(name: string): string {
  const file = path.join(tmp.dir, "..", `${path.basename(tmp.dir)}-${name}.sh`);
  writeFileSync(file, `#!/bin/sh\ntouch ${path.join(fired, name)}\ncat >/dev/null 2>&1 </dev/null\nexit 0\n`, {
    mode: 0o755,
  });
  return file;
}

/** A fresh repository in `dir` with one committed file and an uncommitted change to it. */
function repository(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "user.email", "t@example.com");
  git(dir, "config", "user.name", "t");
  writeFileSync(path.join(dir, "a.txt"), "one\n");
  writeFileSync(path.join(dir, ".gitattributes"), "*.txt diff=canary\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "first");
  writeFileSync(path.join(dir, "a.txt"), "two\n");
}

const scripts: string[] = [];

beforeEach(() => {
  tmp = makeTempDir();
  home = mkdtempSync("/var/tmp/mini-cursor-git-home-");
  fired = mkdtempSync("/var/tmp/mini-cursor-git-fired-");
  chmodSync(fired, 0o777);
  chmodSync(home, 0o755);
});

afterEach(() => {
  tmp.cleanup();
  rmSync(home, { recursive: true, force: true });
  rmSync(fired, { recursive: true, force: true });
  for (const s of scripts.splice(0)) rmSync(s, { force: true });
});

/** The workspace: its own repository names every program git may run; `shipped` and `sub` are more. */
function hostileWorkspace(): void {
  repository(tmp.dir);
  const add = (name: string) => {
    const file = canary(name);
    scripts.push(file);
    return file;
  };
  git(tmp.dir, "config", "core.fsmonitor", add("fsmonitor"));
  git(tmp.dir, "config", "diff.external", add("external"));
  git(tmp.dir, "config", "diff.canary.textconv", add("textconv"));
  git(tmp.dir, "config", "core.pager", add("pager"));
  // A bare repository shipped as a folder of the workspace.
  git(tmp.dir, "init", "-q", "--bare", "shipped");
  git(path.join(tmp.dir, "shipped"), "config", "core.fsmonitor", add("shipped"));
  git(path.join(tmp.dir, "shipped"), "config", "core.bare", "false");
  git(path.join(tmp.dir, "shipped"), "config", "core.worktree", tmp.dir);
  // A nested repository with its own fsmonitor.
  repository(path.join(tmp.dir, "sub"));
  git(path.join(tmp.dir, "sub"), "config", "core.fsmonitor", add("nested"));
}

/**
 * Each command, and the canary it fires when git runs it directly. The pager runs only on a
 * terminal (commands get none), so its line has no control; it must ask all the same.
 */
const ATTACKS: { command: string; workingDirectory?: string; fires?: string }[] = [
  { command: "git status", fires: "fsmonitor" },
  { command: "git diff", fires: "external" },
  { command: "git log -p", fires: "textconv" },
  { command: "git --paginate log -1" },
  { command: "git --git-dir=shipped status", fires: "shipped" },
  { command: "git status", workingDirectory: "sub", fires: "nested" },
  { command: "git -C sub status", fires: "nested" },
];

function asUser(uid: number | undefined, argv: string[]): [string, string[]] {
  return uid === undefined
    ? [argv[0]!, argv.slice(1)]
    : ["setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...argv]];
}

/** Control: git itself, run directly as `uid`, fires each canary; the markers are removed again. */
function controlFires(uid: number | undefined): void {
  for (const attack of ATTACKS) {
    if (!attack.fires) continue;
    const cwd = path.join(tmp.dir, attack.workingDirectory ?? "");
    const [file, args] = asUser(uid, ["sh", "-c", attack.command]);
    try {
      execFileSync(file, args, { cwd, env: gitEnv(), stdio: "ignore" });
    } catch {
      // Some canaries make git fail (a textconv that prints nothing); what matters is that they ran.
    }
    expect([attack.command, existsSync(path.join(fired, attack.fires))]).toEqual([attack.command, true]);
    for (const f of readdirSync(fired)) rmSync(path.join(fired, f));
  }
}

async function runCli(uid: number | undefined) {
  const server = await startOpenAIServer([
    {
      toolCalls: ATTACKS.map(({ command, workingDirectory }) => ({
        name: "execute_command",
        args: workingDirectory ? { command, workingDirectory } : { command },
      })),
    },
    { content: "Finished." },
  ]);
  try {
    const r = await runCliAs(
      uid,
      ["--workspace", tmp.dir, "--approval", "auto-edit", "--sandbox", "off", "--json", "look at the repository"],
      {
        cwd: tmp.dir,
        env: baseEnv({ HOME: home, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test", GIT_CONFIG_NOSYSTEM: "1" }),
        timeoutMs: CLI_DEADLINE_MS,
      },
    );
    const events = r.events as Array<{ type: string; request?: { args: { command: string } }; content?: string }>;
    const { code, stderr } = r;
    return { code, stderr, events };
  } finally {
    await server.close();
  }
}

const users: [string, number | undefined][] = [
  ["root", undefined],
  ["uid 65534", NOBODY],
];

describe.each(users)("as %s", (_name, uid) => {
  (asRoot && runsAs(uid, "git-read-only as uid 65534") ? test : test.skip)(
    "git commands whose repository names a program ask in auto-edit, and no canary fires",
    async () => {
      hostileWorkspace();
      if (uid !== undefined) {
        chownTree(tmp.dir, uid);
        chownTree(home, uid);
      }
      controlFires(uid);
      const { code, stderr, events } = await runCli(uid);
      expect({ code, stderr }).toEqual({ code: 4, stderr: "" });
      expect(events.filter((e) => e.type === "approval").map((e) => e.request!.args.command)).toEqual(
        ATTACKS.map((a) => a.command),
      );
      const results = events.filter((e) => e.type === "tool_result").map((e) => e.content!);
      expect(results).toHaveLength(ATTACKS.length);
      for (const r of results)
        expect(r).toMatch(/^This execute_command call was not run, because nobody could be asked to approve it/);
      expect(readdirSync(fired)).toEqual([]);
    },
  );
});

describe("which repositories are plain", () => {
  const ctx = () => ({ workspace: tmp.dir, home: "/nonexistent-home" });
  const decide = async (command: string, workingDirectory?: string) =>
    (
      await classifyCall(
        { name: "execute_command", args: workingDirectory ? { command, workingDirectory } : { command } },
        "auto-edit",
        [],
        ctx(),
      )
    ).action;

  test("a repository as git init and git clone make it: git status, log -p and diff run without a question", async () => {
    repository(tmp.dir);
    git(tmp.dir, "remote", "add", "origin", "https://example.com/x.git");
    git(tmp.dir, "config", "branch.main.remote", "origin");
    git(tmp.dir, "config", "branch.main.merge", "refs/heads/main");
    for (const command of ["git status", "git log -p", "git diff", "cd . && git status", "git -C . log"])
      expect([command, await decide(command)]).toEqual([command, "run"]);
    // Outside any repository git reads no repository config either.
    rmSync(path.join(tmp.dir, ".git"), { recursive: true });
    expect(await decide("git status")).toBe("run");
  });

  test.each([
    ["core.fsmonitor", "./x"],
    ["core.pager", "./x"],
    ["core.hooksPath", "h"],
    ["diff.external", "./x"],
    ["diff.x.textconv", "./x"],
    ["diff.x.command", "./x"],
    ["filter.x.clean", "./x"],
    ["gpg.program", "./x"],
    ["log.showSignature", "true"],
    ["include.path", "other"],
    ["includeIf.gitdir:/.path", "other"],
    ["alias.st", "!./x"],
    ["core.sshCommand", "./x"],
    ["remote.origin.uploadpack", "./x"],
    ["extensions.partialClone", "origin"],
  ])("a repository setting %s asks", async (key, value) => {
    repository(tmp.dir);
    git(tmp.dir, "config", key, value);
    expect(await decide("git status")).toBe("ask");
    expect(await decide("git log")).toBe("ask");
  });

  test("core.fsmonitor = false is plain", async () => {
    repository(tmp.dir);
    git(tmp.dir, "config", "core.fsmonitor", "false");
    expect(await decide("git status")).toBe("run");
  });

  test("hooks, submodules, a gitdir file and redirecting options ask", async () => {
    repository(tmp.dir);
    expect(await decide("git status")).toBe("run");
    writeFileSync(path.join(tmp.dir, ".git", "hooks", "post-index-change"), "#!/bin/sh\n", { mode: 0o755 });
    expect(await decide("git status")).toBe("ask");
    rmSync(path.join(tmp.dir, ".git", "hooks", "post-index-change"));
    writeFileSync(path.join(tmp.dir, ".gitmodules"), "");
    expect(await decide("git status")).toBe("ask");
    rmSync(path.join(tmp.dir, ".gitmodules"));
    for (const command of [
      "git --git-dir=.git status",
      "git --git-dir .git status",
      "git --work-tree=. status",
      "git --bare log",
      "GIT_DIR=.git git status",
      "git -c core.pager=cat log",
      'git -C "$D" status',
    ])
      expect([command, await decide(command)]).toEqual([command, "ask"]);
    // A .git file pointing at a repository that names a program.
    repository(path.join(tmp.dir, "..", `${path.basename(tmp.dir)}-elsewhere`));
    const elsewhere = path.join(tmp.dir, "..", `${path.basename(tmp.dir)}-elsewhere`);
    try {
      git(elsewhere, "config", "core.fsmonitor", "./x");
      mkdirSync(path.join(tmp.dir, "wt"));
      writeFileSync(path.join(tmp.dir, "wt", ".git"), `gitdir: ${path.join(elsewhere, ".git")}\n`);
      expect(await decide("git status", "wt")).toBe("ask");
      writeFileSync(path.join(tmp.dir, "wt", ".git"), "not a gitdir line\n");
      expect(await decide("git status", "wt")).toBe("ask");
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test("the config reader refuses what it cannot follow", () => {
    expect(configIsPlain('[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote "o"]\n\turl = x\n')).toBe(
      true,
    );
    expect(configIsPlain("[core] fsmonitor = ./x\n")).toBe(false);
    expect(configIsPlain("[core]\n\tbare = false \\\n\tfsmonitor = ./x\n")).toBe(false);
    expect(configIsPlain("[CORE]\n\tFSMonitor = ./x\n")).toBe(false);
    expect(configIsPlain("[core.x]\n\tbare = false\n")).toBe(false);
    expect(configIsPlain('[color "diff"]\n\tmeta = blue\n')).toBe(true);
    expect(configIsPlain("garbage\n")).toBe(false);
    expect(configIsPlain("bare = false\n")).toBe(false);
  });
});
