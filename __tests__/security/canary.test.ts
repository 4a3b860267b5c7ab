import { restartSettings } from "../helpers/start.js";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { UNATTENDED_RESPONSE } from "../../src/policy/approval.js";
import { createTools } from "../../src/tools/index.js";
import { MACHINE_ROWS, TABLE } from "../helpers/command-table.js";
import { baseEnv, NOBODY, RUNNING_AS_ROOT, runCliAs } from "../helpers/cli.js";
import { runsAs, chownTree } from "../helpers/as-user.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { startOpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The dangerous commands of the table, run for real: full-auto, no sandbox, nobody to ask (the
 * approver declines as the CLI does without a terminal), HOME a temp folder full of canary
 * files, the workspace a git repository with uncommitted work. Nothing may change.
 */

// Every dangerous row of the table goes through one CLI run; on a loaded 2-core machine that takes minutes.
const TIMEOUT_MS = 360_000;
const DANGEROUS = TABLE.filter(([c, kind]) => kind === "D" && !MACHINE_ROWS.has(c)).map(([c]) => c);

let tmp: ReturnType<typeof makeTempDir>;
let home: string;
const savedHome = process.env.HOME;

/** Every file and folder under `dir` with its content (folders as "<dir>"); mini-cursor's own state folder left out. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (d === dir && name === ".mini-cursor") continue;
      const p = path.join(d, name);
      const st = statSync(p, { throwIfNoEntry: false } as never) as ReturnType<typeof statSync> | undefined;
      if (st?.isDirectory()) {
        out[path.relative(dir, p)] = "<dir>";
        walk(p);
      } else out[path.relative(dir, p)] = st ? readFileSync(p, "utf8") : "<dangling>";
    }
  };
  walk(dir);
  return out;
}

const git = (...args: string[]) =>
  execFileSync("git", ["-c", "safe.directory=*", ...args], {
    cwd: tmp.dir,
    encoding: "utf8",
    env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" },
  });

beforeEach(() => {
  tmp = makeTempDir();
  home = mkdtempSync("/var/tmp/mini-cursor-canary-home-");
  // The classifier reads the home folder from HOME (os.homedir()), as commands do.
  process.env.HOME = home;
  restartSettings();
  mkdirSync(path.join(home, "x"));
  mkdirSync(path.join(home, ".ssh"));
  writeFileSync(path.join(home, "x", "keep.txt"), "keep\n");
  writeFileSync(path.join(home, ".profile"), "profile\n");
  writeFileSync(path.join(home, ".bashrc"), "bashrc\n");
  writeFileSync(path.join(home, ".ssh", "id_rsa"), "secret\n");
  git("init", "-q", "-b", "main");
  git("config", "user.email", "t@example.com");
  git("config", "user.name", "t");
  mkdirSync(path.join(tmp.dir, "src"));
  writeFileSync(path.join(tmp.dir, "src", "index.ts"), "committed\n");
  writeFileSync(path.join(tmp.dir, "package.json"), "{}\n");
  git("add", "-A");
  git("commit", "-q", "-m", "first");
  writeFileSync(path.join(tmp.dir, "src", "index.ts"), "uncommitted work\n");
  writeFileSync(path.join(tmp.dir, "untracked.txt"), "untracked work\n");
  mkdirSync(path.join(tmp.dir, "build"));
  writeFileSync(path.join(tmp.dir, "build", "out.js"), "built\n");
});

afterEach(() => {
  process.env.HOME = savedHome;
  restartSettings();
  tmp.cleanup();
  rmSync(home, { recursive: true, force: true });
});

test(
  `${DANGEROUS.length} dangerous commands in full-auto without a sandbox or a terminal: none runs, nothing changes`,
  async () => {
    expect(DANGEROUS.length).toBeGreaterThanOrEqual(200);
    // git status may refresh .git/index: before the snapshots.
    const statusBefore = git("status", "--porcelain");
    const homeBefore = snapshot(home);
    const workBefore = snapshot(tmp.dir);
    const tools = createTools({ workspace: tmp.dir, env: { ...process.env, HOME: home } });
    const harness = engineHarness(
      "loop",
      tmp.dir,
      [
        { toolCalls: DANGEROUS.map((command) => ({ name: "execute_command", args: { command, timeoutMs: 5000 } })) },
        "done",
      ],
      { approval: "full-auto" },
      { tools, defaultAnswer: { ...UNATTENDED_RESPONSE } },
    );
    const summary = await harness.run("tidy up");
    // Every requested action was declined, so the run does not count as done.
    expect(summary.reason).toBe("not_run");
    // Every one was asked about (and declined), none ran.
    expect(harness.approvals.map((a) => a.args.command)).toEqual(DANGEROUS);
    expect(harness.approvals.every((a) => a.asksEveryTime === true)).toBe(true);
    const results = eventsOf(harness.events, "tool_result");
    expect(results).toHaveLength(DANGEROUS.length);
    for (const r of results)
      expect(r.content).toMatch(/^This execute_command call was not run, because nobody could be asked to approve it/);
    expect(snapshot(home)).toEqual(homeBefore);
    expect(snapshot(tmp.dir)).toEqual(workBefore);
    expect(git("status", "--porcelain")).toBe(statusBefore);
    expect(git("log", "--format=%s")).toBe("first\n");
  },
  TIMEOUT_MS,
);

test(
  "control: the same setup does run what full-auto allows (a build folder in the workspace is deleted)",
  async () => {
    const tools = createTools({ workspace: tmp.dir, env: { ...process.env, HOME: home } });
    const harness = engineHarness(
      "loop",
      tmp.dir,
      [{ toolCalls: [{ name: "execute_command", args: { command: "rm -rf build" } }] }, "done"],
      { approval: "full-auto" },
      { tools },
    );
    await harness.run("clean the build");
    expect(harness.approvals).toEqual([]);
    expect(existsSync(path.join(tmp.dir, "build"))).toBe(false);
    expect(readFileSync(path.join(tmp.dir, "src", "index.ts"), "utf8")).toBe("uncommitted work\n");
  },
  TIMEOUT_MS,
);

const asRoot = RUNNING_AS_ROOT;

(asRoot && runsAs(NOBODY, "canary as an ordinary user") ? test : test.skip)(
  "as an ordinary user, through the CLI (--sandbox off, full-auto, no terminal): none runs, nothing changes",
  async () => {
    const statusBefore = git("status", "--porcelain");
    chownTree(home, NOBODY);
    chownTree(tmp.dir, NOBODY);
    const homeBefore = snapshot(home);
    const workBefore = snapshot(tmp.dir);
    const server = await startOpenAIServer([
      { toolCalls: DANGEROUS.map((command) => ({ name: "execute_command", args: { command, timeoutMs: 5000 } })) },
      { content: "Finished." },
    ]);
    try {
      // runCliAs gives the user a state home of its own, outside home (which must not change).
      const { code, stderr, events } = await runCliAs(
        NOBODY,
        ["--workspace", tmp.dir, "--approval", "full-auto", "--sandbox", "off", "--json", "tidy up"],
        {
          cwd: tmp.dir,
          env: baseEnv({ HOME: home, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test" }),
          timeoutMs: TIMEOUT_MS - 10_000,
        },
      );
      // Node's MaxListenersExceededWarning for 200+ calls in one turn is not ours to judge here.
      const problems = stderr
        .split("\n")
        .filter((l) => l.trim() && !/MaxListenersExceededWarning|--trace-warnings/.test(l));
      // Exit 4: nothing the model asked for was run.
      expect({ code, problems }).toEqual({ code: 4, problems: [] });
      const approvals = (
        events as Array<{ type: string; request?: { args: { command: string } }; response?: { decision: string } }>
      ).filter((e) => e.type === "approval");
      expect(approvals.map((a) => [a.request!.args.command, a.response!.decision])).toEqual(
        DANGEROUS.map((c) => [c, "deny"]),
      );
    } finally {
      await server.close();
    }
    expect(snapshot(home)).toEqual(homeBefore);
    expect(snapshot(tmp.dir)).toEqual(workBefore);
    expect(git("status", "--porcelain")).toBe(statusBefore);
  },
  TIMEOUT_MS,
);
