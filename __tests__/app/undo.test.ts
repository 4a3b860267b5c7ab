import { restartSettings } from "../helpers/start.js";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { Engine } from "../../src/agent/engine.js";
import type { AgentEvent } from "../../src/contracts/events.js";
import type { ThreadHistory } from "../../src/agent/thread-history.js";
import { formatTurns, listTurns, rewindTo, undoLastTurn, type UndoContext } from "../../src/app/undo.js";
import { createGraph } from "../../src/graph/graph.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { graphThreadHistory } from "../../src/graph/rewind.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import { loopThreadHistory } from "../../src/loop/rewind.js";
import { createTools } from "../../src/tools/index.js";
import { engineSettings, inMemoryLoopThreads } from "../helpers/engine-harness.js";
import { ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

interface Rig {
  model: ScriptedChatModel;
  events: AgentEvent[];
  run(task: string): Promise<void>;
  ctx: UndoContext;
}

function rig(kind: "graph" | "loop", workspace: string, script: ScriptedTurn[]): Rig {
  const model = new ScriptedChatModel(script);
  const settings = engineSettings(workspace, { approval: "full-auto" });
  const tools = createTools({ workspace });
  const meta = { engine: kind, model: "scripted", provider: "offline", workspace };
  let engine: Engine;
  let history: ThreadHistory;
  if (kind === "graph") {
    const graph = createGraph(settings, { checkpointer: new MemorySaver(), model, tools });
    engine = createGraphEngine({ graph, meta, modelSettings: settings, approval: "full-auto", maxSteps: 30 });
    history = graphThreadHistory(graph);
  } else {
    const { memory } = inMemoryLoopThreads();
    engine = createLoopEngine({
      runtime: createRuntime(settings, { model, tools }),
      meta,
      modelSettings: settings,
      memory,
    });
    history = loopThreadHistory(memory);
  }
  const events: AgentEvent[] = [];
  return {
    model,
    events,
    ctx: { workspace, threadId: "t1", history, processes: tools.processes },
    async run(task) {
      const summary = await engine.run({
        task,
        threadId: "t1",
        emit: (e) => events.push(e),
        approver: async () => ({ decision: "deny" }),
      });
      expect(summary.reason).toBe("done");
    },
  };
}

/** Every file outside .mini-cursor: its bytes (base64) and mode, or the link target. */
function files(root: string, skip = [".mini-cursor"]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      if (skip.includes(rel)) continue;
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full);
      else out[rel] = `${(st.mode & 0o777).toString(8)} ${readFileSync(full).toString("base64")}`;
    }
  };
  walk(root);
  return out;
}

const call = (name: string, args: Record<string, unknown>) => ({ name, args });
const humanTexts = (messages: BaseMessage[]) => messages.filter((m) => m.getType() === "human").map((m) => m.content);
const noConfirm = { forceHint: "/undo --force" };

function setUp(dir: string): void {
  writeFileSync(path.join(dir, ".gitignore"), "node_modules/\n");
  mkdirSync(path.join(dir, "node_modules"));
  writeFileSync(path.join(dir, "node_modules", "dep.js"), "dep\n");
  writeFileSync(path.join(dir, "keep.txt"), "keep\n");
  writeFileSync(path.join(dir, "run.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(path.join(dir, "run.sh"), 0o755);
  writeFileSync(path.join(dir, "bin.dat"), Buffer.from([0, 1, 2, 255, 10, 13]));
}

describe.each(["graph", "loop"] as const)("%s engine", (kind) => {
  test("/undo twice brings back the exact files of two turns ago and drops both turns from the thread; ignored folders are untouched", async () => {
    setUp(tmp.dir);
    const r = rig(kind, tmp.dir, [
      // Turn 1: writes two files.
      {
        toolCalls: [
          call("write_file", { filePath: "a.txt", content: "one\n" }),
          call("write_file", { filePath: "src/b.txt", content: "b\n" }),
        ],
      },
      "turn 1 done",
      // Turn 2: edits a.txt; a command drops run.sh's executable bit, deletes keep.txt, overwrites bin.dat and writes into node_modules.
      { toolCalls: [call("read_file", { filePath: "a.txt" })] },
      { toolCalls: [call("edit_file", { filePath: "a.txt", oldString: "one", newString: "two" })] },
      {
        toolCalls: [
          call("execute_command", {
            command: "chmod -x run.sh && rm keep.txt && printf 'x' > bin.dat && echo more >> node_modules/dep.js",
          }),
        ],
      },
      "turn 2 done",
      // Turn 3: deletes src/b.txt through a command and creates a new folder.
      {
        toolCalls: [
          call("execute_command", { command: "rm src/b.txt && mkdir -p new/deep && echo n > new/deep/n.txt" }),
        ],
      },
      "turn 3 done",
      // After the undos: the next request.
      "turn 4 done",
    ]);
    await r.run("turn one");
    const afterTurnOne = files(tmp.dir, [".mini-cursor", "node_modules"]);
    expect(afterTurnOne["a.txt"]).toBe(`644 ${Buffer.from("one\n").toString("base64")}`);
    await r.run("turn two");
    await r.run("turn three");
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("two\n");
    expect(readFileSync(path.join(tmp.dir, "new/deep/n.txt"), "utf8")).toBe("n\n");

    const third = await undoLastTurn(r.ctx, noConfirm);
    expect(third).toEqual({
      ok: true,
      text: ["Undid turn 3: turn three", "Files (2):", "  removed    new/deep/n.txt", "  recreated  src/b.txt"].join(
        "\n",
      ),
    });
    const second = await undoLastTurn(r.ctx, noConfirm);
    expect(second).toEqual({
      ok: true,
      text: [
        "Undid turn 2: turn two",
        "Files (4):",
        "  restored   a.txt (+1 -1)",
        "  restored   bin.dat (binary)",
        "  recreated  keep.txt",
        "  restored   run.sh (+0 -0, mode 644 -> 755)",
      ].join("\n"),
    });
    expect(files(tmp.dir, [".mini-cursor", "node_modules"])).toEqual(afterTurnOne);
    // Ignored: not snapshotted, so not put back either; and the empty folder the turn made is gone.
    expect(readFileSync(path.join(tmp.dir, "node_modules", "dep.js"), "utf8")).toBe("dep\nmore\n");
    expect(readdirSync(tmp.dir)).not.toContain("new");

    const { messages, snapshots } = await r.ctx.history.read("t1");
    expect(formatTurns(listTurns(messages, snapshots))).toBe(
      "Turns (/rewind <n> goes back to before turn n):\n    1  turn one",
    );
    await r.run("turn four");
    expect(humanTexts(r.model.calls.at(-1)!)).toEqual(["turn one", "turn four"]);
    expect(r.model.calls.at(-1)!.some((m) => String(m.content).includes("turn 2 done"))).toBe(false);
  }, 120_000);

  test("a file changed by hand since the agent's step is not overwritten without a yes", async () => {
    setUp(tmp.dir);
    const r = rig(kind, tmp.dir, [
      {
        toolCalls: [
          call("write_file", { filePath: "a.txt", content: "agent\n" }),
          call("write_file", { filePath: "other.txt", content: "o\n" }),
        ],
      },
      "done",
    ]);
    await r.run("write a.txt");
    writeFileSync(path.join(tmp.dir, "a.txt"), "by hand\n");

    const refused = await undoLastTurn(r.ctx, noConfirm);
    expect(refused).toEqual({
      ok: false,
      text:
        "These files were changed since turn 1 (by hand or by another thread); undoing it would overwrite those changes:\n  a.txt\n" +
        "Nothing was changed. To overwrite them, run /undo --force.",
    });
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("by hand\n");
    expect(readFileSync(path.join(tmp.dir, "other.txt"), "utf8")).toBe("o\n");
    expect(humanTexts((await r.ctx.history.read("t1")).messages)).toEqual(["write a.txt"]);

    const asked: string[][] = [];
    const declined = await undoLastTurn(r.ctx, { ...noConfirm, confirm: async (paths) => (asked.push(paths), false) });
    expect(declined).toEqual({ ok: false, text: "Undo cancelled; nothing was changed." });
    expect(asked).toEqual([["a.txt"]]);
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("by hand\n");

    const accepted = await undoLastTurn(r.ctx, { ...noConfirm, confirm: async () => true });
    expect(accepted.ok).toBe(true);
    expect(
      readdirSync(tmp.dir)
        .filter((n) => n.endsWith(".txt"))
        .sort(),
    ).toEqual(["keep.txt"]);
    expect(humanTexts((await r.ctx.history.read("t1")).messages)).toEqual([]);
  });

  test("/rewind lists the turns and goes back to before any of them", async () => {
    const r = rig(kind, tmp.dir, [
      { toolCalls: [call("write_file", { filePath: "one.txt", content: "1\n" })] },
      "ok",
      { toolCalls: [call("read_file", { filePath: "one.txt" })] },
      "ok",
      { toolCalls: [call("write_file", { filePath: "three.txt", content: "3\n" })] },
      "ok",
    ]);
    await r.run("first");
    await r.run("second, reads only");
    await r.run("third");
    const { messages, snapshots } = await r.ctx.history.read("t1");
    expect(formatTurns(listTurns(messages, snapshots))).toBe(
      [
        "Turns (/rewind <n> goes back to before turn n):",
        "    1  first",
        "    2  second, reads only  (changed no files)",
        "    3  third",
      ].join("\n"),
    );
    expect((await rewindTo(r.ctx, 4, noConfirm)).ok).toBe(false);
    const back = await rewindTo(r.ctx, 2, noConfirm);
    expect(back.ok).toBe(true);
    expect(back.text).toContain("That turn changed no files");
    expect(readdirSync(tmp.dir).filter((n) => n.endsWith(".txt"))).toEqual(["one.txt"]);
    expect(humanTexts((await r.ctx.history.read("t1")).messages)).toEqual(["first"]);
  });
});

test("the user's own git repository, index and config are never touched", async () => {
  const { execFileSync } = await import("node:child_process");
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: tmp.dir,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: tmp.dir, GIT_CONFIG_NOSYSTEM: "1", GIT_OPTIONAL_LOCKS: "0" },
    });
  git("init", "--quiet");
  git("config", "user.email", "u@example.com");
  git("config", "user.name", "u");
  writeFileSync(path.join(tmp.dir, "tracked.txt"), "t\n");
  git("add", "tracked.txt");
  git("commit", "--quiet", "-m", "first");
  const before = {
    status: git("status", "--porcelain"),
    index: readFileSync(path.join(tmp.dir, ".git", "index")),
    config: readFileSync(path.join(tmp.dir, ".git", "config"), "utf8"),
    head: git("rev-parse", "HEAD"),
  };
  const r = rig("graph", tmp.dir, [
    { toolCalls: [call("write_file", { filePath: "tracked.txt", content: "changed\n" })] },
    "ok",
  ]);
  await r.run("change it");
  expect((await undoLastTurn(r.ctx, noConfirm)).ok).toBe(true);
  expect(git("status", "--porcelain")).toBe(before.status);
  expect(readFileSync(path.join(tmp.dir, ".git", "index"))).toEqual(before.index);
  expect(readFileSync(path.join(tmp.dir, ".git", "config"), "utf8")).toBe(before.config);
  expect(git("rev-parse", "HEAD")).toBe(before.head);
  expect(readFileSync(path.join(tmp.dir, "tracked.txt"), "utf8")).toBe("t\n");
});

test.each(["graph", "loop"] as const)(
  "%s: without git the run goes on, with one notice in the trace, and /undo says the files were not recorded",
  async (kind) => {
    const r = rig(kind, tmp.dir, [
      { toolCalls: [call("write_file", { filePath: "a.txt", content: "a\n" })] },
      { toolCalls: [call("write_file", { filePath: "b.txt", content: "b\n" })] },
      "done",
    ]);
    const savedPath = process.env.PATH;
    process.env.PATH = path.join(tmp.dir, "no-git-here");
    restartSettings();
    try {
      await r.run("write two files");
    } finally {
      process.env.PATH = savedPath;
      restartSettings();
    }
    expect(readFileSync(path.join(tmp.dir, "b.txt"), "utf8")).toBe("b\n");
    const notices = r.events.filter((e) => e.type === "notice").map((e) => (e as { message: string }).message);
    expect(notices).toEqual([
      "Workspace snapshots failed (git is not installed (or not on PATH), so the workspace cannot be snapshotted); the run goes on, but /undo cannot bring back the files of this step.",
    ]);
    const undone = await undoLastTurn(r.ctx, noConfirm);
    expect(undone).toEqual({
      ok: false,
      text: "The files of turn 1 were not recorded (the snapshot failed: git is not installed (or not on PATH), so the workspace cannot be snapshotted), so they cannot be brought back; nothing was changed.",
    });
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("a\n");
    expect(humanTexts((await r.ctx.history.read("t1")).messages)).toEqual(["write two files"]);
  },
);

test("/undo stops the background processes the undone turn started", async () => {
  const server =
    "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });\n";
  const r = rig("graph", tmp.dir, [
    { toolCalls: [call("write_file", { filePath: "server.js", content: server })] },
    { toolCalls: [call("execute_command", { command: "node server.js" })] },
    "running",
  ]);
  try {
    await r.run("start a server");
    const started = r.ctx.processes!.list().filter((p) => p.running);
    expect(started.map((p) => p.command)).toEqual(["node server.js"]);
    const undone = await undoLastTurn(r.ctx, noConfirm);
    expect(undone.text.split("\n").at(-1)).toBe(
      `Stopped background process ${started[0]!.id} (node server.js), started by that turn.`,
    );
    expect(r.ctx.processes!.list().filter((p) => p.running)).toEqual([]);
    expect(readdirSync(tmp.dir).filter((n) => !n.startsWith("."))).toEqual([]);
  } finally {
    await r.ctx.processes!.stopAll();
  }
});

test("a loop thread with the same id as a graph thread never makes the graph's files travel back", async () => {
  const graph = rig("graph", tmp.dir, [
    { toolCalls: [call("write_file", { filePath: "a.txt", content: "graph\n" })] },
    "ok",
    { toolCalls: [call("execute_command", { command: "cat a.txt" })] },
    "ok",
  ]);
  const loop = rig("loop", tmp.dir, [
    // write_file replaces only what this thread has read (issue 28): read first, in the same turn.
    {
      toolCalls: [
        call("read_file", { filePath: "a.txt" }),
        call("write_file", { filePath: "a.txt", content: "loop\n" }),
      ],
    },
    "ok",
  ]);
  await graph.run("write it");
  await loop.run("write it too");
  await graph.run("show it");
  expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("loop\n");
  const shown = graph.events.filter((e) => e.type === "tool_result").map((e) => (e as { content: string }).content);
  expect(shown.at(-1)).toContain("loop");
  expect(graph.events.filter((e) => e.type === "notice")).toEqual([]);
});
