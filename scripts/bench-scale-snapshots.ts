import { configureParts } from "../src/app/configure.js";
/**
 * Scale measurements of workspace snapshots (issue 30, goal 3): what the snapshots add to a
 * one-file edit step and to a command step in the generated monorepo, beside `git status` on
 * the same files, and what an edit step pays while the first snapshot still runs in the
 * background. Each is the real step code (agent/snapshot-step.ts: the snapshot before the
 * tools, the one after and the thread's move to it), with the tool's own work done here in between.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { snapshotBeforeTools } from "../src/agent/snapshot-step.js";
import { FIRST_SNAPSHOT_TIMEOUT_MS, snapshotGitDir, snapshotStore } from "../src/snapshots/store.js";
import { createTools } from "../src/tools/index.js";
import {
  medianOf,
  runCommand,
  timeMs,
  within,
  type ScaleFixture,
  type ScaleMeasurement,
  type ScaleRow,
} from "./bench-scale-lib.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/** Issue 30's goals, in ms a step gains from its snapshots. */
const GOAL_EDIT_STEP_MS = 100;
const GOAL_COMMAND_STEP_MS = 300;
const REPEATS = 5;

type Call = { name: string; args: Record<string, unknown> };

/** The thread the steps belong to: its move to each step's snapshot is part of what a step pays. */
const THREAD = "bench";

/** The snapshots around one step of `call`, with `work` (the tool's effect) between them: ms. */
async function stepSnapshotMs(repo: string, call: Call, work: () => void, request: string): Promise<number> {
  let spent = 0;
  // The tools' declarations say which paths a call changes (without them every step is a command's).
  const tools = createTools({ workspace: repo });
  const started = performance.now();
  const step = await snapshotBeforeTools({
    workspace: repo,
    threadId: THREAD,
    messages: [new HumanMessage({ content: "bench", id: request })],
    calls: [call],
    tools,
    notice: () => undefined,
  });
  spent += performance.now() - started;
  work();
  const finishing = performance.now();
  const update = await step.finish();
  spent += performance.now() - finishing;
  if (!update[request]?.after) throw new Error(`no snapshot was recorded: ${JSON.stringify(update)}`);
  return spent;
}

const snapshots: ScaleMeasurement = {
  name: "workspace snapshots around an edit step and a command step",
  async run(fx) {
    const n = fx.size.files.toLocaleString("en-US");
    const file = path.join(fx.sampleDir, "file1.ts");
    let version = 0;
    const edit = (): [Call, () => void] => {
      const content = `export const edited = ${++version};\n`;
      return [
        { name: "write_file", args: { filePath: file, content } },
        () => writeFileSync(path.join(fx.repo, file), content),
      ];
    };
    const command = (): [Call, () => void] => {
      const rel = path.join(fx.sampleDir, `made${++version}.txt`);
      return [
        { name: "execute_command", args: { command: `echo made > ${rel}` } },
        () => writeFileSync(path.join(fx.repo, rel), "made\n"),
      ];
    };
    // The shadow repository goes in the fixture's temp dir, not the user's state home.
    const stateHome = process.env.MINI_CURSOR_STATE_HOME;
    process.env.MINI_CURSOR_STATE_HOME = path.join(fx.dir, "state");
    try {
      return await measure(fx, edit, command, n);
    } finally {
      if (stateHome === undefined) delete process.env.MINI_CURSOR_STATE_HOME;
      else process.env.MINI_CURSOR_STATE_HOME = stateHome;
    }
  },
};

async function measure(
  fx: ScaleFixture,
  edit: () => [Call, () => void],
  command: () => [Call, () => void],
  n: string,
): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  const store = snapshotStore(fx.repo);

  // The first step comes while the first snapshot has only just started in the background.
  const firstStarted = performance.now();
  store.startFirst();
  const [call, work] = edit();
  const duringFirst = await stepSnapshotMs(fx.repo, call, work, "during-first");
  await store.firstReady(FIRST_SNAPSHOT_TIMEOUT_MS);
  const firstMs = performance.now() - firstStarted;
  rows.push(
    within(
      `a one-file edit step while the first snapshot of ${n} files runs in the background adds ≤ ${GOAL_EDIT_STEP_MS} ms`,
      duringFirst,
      GOAL_EDIT_STEP_MS,
      `the first snapshot: ${(firstMs / 1000).toFixed(0)} s, not waited for`,
    ),
  );

  const times = async (make: () => [Call, () => void], label: string) => {
    const ms: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const [c, w] = make();
      ms.push(await stepSnapshotMs(fx.repo, c, w, `${label}-${i}`));
    }
    return medianOf(ms);
  };
  const editMs = await times(edit, "edit");
  const takesBefore = { ...store.counts };
  const commandMs = await times(command, "command");
  const takes = store.counts;
  // How the command steps' whole snapshots were taken: the file watcher's answer, or a scan.
  const watched = takes.watched - takesBefore.watched;
  const scanned = takes.scanned - takesBefore.scanned;
  const way = `${watched} of ${watched + scanned} whole snapshots from the file watcher${scanned > 0 ? ` (a scan: ${takes.lastScanReason})` : ""}`;
  // The raw tool: git status over the same files and the same index, as a user would run it.
  const dir = snapshotGitDir(fx.repo);
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    GIT_DIR: dir,
    GIT_WORK_TREE: fx.repo,
    GIT_INDEX_FILE: path.join(dir, "index"),
    GIT_OPTIONAL_LOCKS: "0",
  };
  const statusMs = await timeMs(
    () =>
      runCommand(
        "git",
        ["-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all", "status", "--porcelain", "-uall"],
        fx.repo,
        [0],
        env,
      ),
    REPEATS,
  );
  const raw = `git status: ${statusMs.toFixed(0)} ms`;
  rows.push(
    within(
      `a one-file edit step adds ≤ ${GOAL_EDIT_STEP_MS} ms of snapshots (${n} files)`,
      editMs,
      GOAL_EDIT_STEP_MS,
      raw,
    ),
    within(
      `a command step adds ≤ ${GOAL_COMMAND_STEP_MS} ms of snapshots (${n} files; two whole ones)`,
      commandMs,
      GOAL_COMMAND_STEP_MS,
      `${raw}; ${way}`,
    ),
  );
  return rows;
}

export const SNAPSHOT_MEASUREMENTS: readonly ScaleMeasurement[] = [snapshots];
