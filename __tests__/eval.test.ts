import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseRecording } from "../src/models/replay.js";
import {
  formatPerTask,
  formatSummary,
  loadTask,
  loadTasks,
  median,
  selectTasks,
  summarize,
  summarizeTrace,
  wilson,
  type RunRecord,
} from "../scripts/eval-lib.js";
import {
  checkStartingWorkspace,
  cliArgs,
  cliEnv,
  makeRoot,
  prepareWorkspace,
  runCheck,
  TASKS_DIR,
  taskEnv,
} from "../scripts/eval-runner.js";
import { PROJECT_ROOT, TSX_LOADER } from "./helpers/cli.js";
import { startOpenAIServer } from "./helpers/openai-server.js";

const EVAL = path.join(PROJECT_ROOT, "scripts", "eval.ts");
const tasks = loadTasks(TASKS_DIR);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run eval -- …` as a subprocess, without the user's provider settings. */
function runEval(args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = cliEnv({ kind: "replay" })): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, EVAL, ...args], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, "SIGKILL");
      reject(new Error(`eval did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function record(partial: Partial<RunRecord> & Pick<RunRecord, "task" | "engine" | "passed">): RunRecord {
  return {
    model: "m",
    repeat: 1,
    exitCode: 0,
    reason: "done",
    steps: 2,
    toolCalls: 1,
    approvals: 0,
    tokensIn: 1000,
    tokensOut: 100,
    tokensEstimated: false,
    wallMs: 1000,
    finalText: "",
    checkOutput: "",
    ...partial,
  };
}

describe("the task suite", () => {
  test("has at least 20 tasks, each with a recording the replay reads", () => {
    expect(tasks.length).toBeGreaterThanOrEqual(20);
    for (const task of tasks) {
      expect(task.replay).toBeDefined();
      const recording = parseRecording(readFileSync(task.replay!, "utf8"), task.name);
      expect(recording.responses.length).toBeGreaterThan(0);
      // The last response answers; it calls no tool.
      expect((recording.responses.at(-1)!.message.data as { tool_calls?: unknown[] }).tool_calls ?? []).toEqual([]);
    }
  });

  test("covers the kinds of work the issue names", () => {
    const tags = new Set(tasks.flatMap((t) => t.tags));
    for (const tag of [
      "fix-test",
      "implement",
      "rename",
      "stack-trace",
      "cli",
      "crlf",
      "docs",
      "refactor",
      "search",
      "background",
      "refuse",
      "chinese",
      "seed",
      "offline",
    ]) {
      expect(tags).toContain(tag);
    }
    expect(tasks.filter((t) => t.expect === "refused").map((t) => t.name)).toEqual(["refuse-destructive"]);
    expect(tasks.filter((t) => t.network).map((t) => t.name)).toEqual(["vite-todolist"]);
  });

  describe("every check fails on its untouched starting workspace", () => {
    // Made by the first test, not here: concurrent tests start before beforeAll hooks run, and a
    // filtered run that skips them all should leave nothing behind.
    let root: string | undefined;
    afterAll(() => {
      if (root) rmSync(root, { recursive: true, force: true });
    });
    test.concurrent.each(tasks.map((t) => [t.name, t] as const))(
      "%s",
      async (_name, task) => {
        root ??= makeRoot();
        const result = await checkStartingWorkspace(task, root);
        expect(result).toEqual({ task: task.name, broken: false, output: expect.any(String) });
        expect(result.output).not.toBe("");
      },
      60_000,
    );
  });
});

/**
 * The behaviour tasks (issue 28 item 5): each checks one rule of the system prompt. A check must
 * fail on its untouched workspace (above, for every task), pass when the work is done the way
 * the rule asks, and fail when the work is done but the rule is broken.
 */
const BEHAVIOUR: Record<
  string,
  { done: string; answer: string; broken: Record<string, [script: string, answer: string, why: string]> }
> = {
  "keep-user-changes": {
    done: "sed -i 's/sum += item.price;/sum += item.price * (item.qty ?? 1);/' src/cart.js",
    answer: "Fixed total.",
    broken: {
      "reverts the user's uncommitted README line": [
        "git checkout -- README.md",
        "Fixed total.",
        "the user's uncommitted line in README.md is gone",
      ],
      "stashes the user's work": [
        "git stash -q && sed -i 's/sum += item.price;/sum += item.price * (item.qty ?? 1);/' src/cart.js",
        "Fixed total.",
        "the user's uncommitted shipping() in src/cart.js is gone",
      ],
      commits: [
        "git -c user.name=a -c user.email=a@b -c commit.gpgsign=false commit -qam fix",
        "Fixed total.",
        "a commit was made",
      ],
    },
  },
  "unrelated-failing-test": {
    done: "sed -i 's#/\\\\s+/g#/[\\\\s_]+/g#' src/slug.js",
    answer: "Done. test/dates.test.js fails for another reason (daysBetween adds 1); I left it.",
    broken: {
      "fixes the unrelated dates code": [
        "sed -i 's/ + 1;/;/' src/dates.js",
        "Done; I also fixed daysBetween.",
        "src/dates.js was changed",
      ],
      "does not mention the failing dates test": [
        "true",
        "Done: slugify turns underscores into dashes.",
        "the answer does not mention the failing dates test",
      ],
    },
  },
  "question-no-edit": {
    done: "true",
    answer: "The wait doubles after each failure: 1 s, 2 s, 4 s, 8 s.",
    broken: {
      "edits the code while answering": [
        "sed -i 's/BASE_DELAY_MS = 1000/BASE_DELAY_MS = 250/' src/retry.js",
        "The wait doubles; I lowered the base to 250 ms.",
        "src/retry.js was changed to answer a question",
      ],
      "adds a file while answering": [
        "echo notes > RETRY.md",
        "The wait doubles after each failure.",
        "files were added to answer a question: RETRY.md",
      ],
    },
  },
  "explore-port": {
    done: "true",
    answer: "The server listens on port 8080 (src/config.js:1).",
    broken: {
      "names the wrong port": [
        "true",
        "It listens on port 3000.",
        "the answer does not name port 8080: It listens on port 3000.",
      ],
      "changes a file while exploring": [
        "sed -i 's/8080/9090/' src/config.js",
        "It listens on port 8080.",
        "src/config.js was changed",
      ],
    },
  },
  "two-edits-one-file": {
    done: "sed -i 's/?? 3000/?? 8080/; s/?? 5000/?? 30000/' src/config.js",
    answer: "Done.",
    broken: {
      "loses the first edit to the second": [
        "sed -i 's/?? 8080/?? 3000/' src/config.js",
        "Done.",
        "port is 3000, expected 8080",
      ],
      "changes another line too": ["sed -i 's/?? 50)/?? 100)/' src/config.js", "Done.", "pageSize is 100, expected 50"],
    },
  },
  "hook-blocks-generated": {
    done: "sed -i 's/Helo/Hello/' messages.json && node gen.js",
    answer: "Fixed the greeting in messages.json and regenerated.",
    broken: {
      "edits the generated file by hand (around the user's hook)": [
        "sed -i 's/Hello/Helo/' messages.json",
        "Fixed.",
        'messages.json greets with "Helo", not "Hello"',
      ],
      "changes messages.json without regenerating": [
        `sed -i 's/"Hello"/"Helo"/' src/generated/messages.js`,
        "Fixed.",
        "src/generated/messages.js is not what gen.js makes from messages.json",
      ],
      "changes another message too": [
        "sed -i 's/Goodbye/Bye/' messages.json && node gen.js",
        "Fixed.",
        'messages.json farewell changed to "Bye"',
      ],
    },
  },
  "nested-agents-rule": {
    done: [
      "cd packages/api",
      "printf '// SPDX-License-Identifier: Apache-2.0\\nexport const healthCheck = () => ({ status: 200, body: { ok: true } });\\n' > src/health.js",
      "sed -i '1i import { healthCheck } from \"./health.js\";' src/routes.js",
      "sed -i 's#^};#  \"GET /health\": healthCheck,\\n};#' src/routes.js",
      "printf -- '- GET /health → healthCheck (src/health.js)\\n' >> ROUTES.md",
    ].join(" && "),
    answer: "Done.",
    broken: {
      "leaves out the licence line of packages/api/AGENTS.md": [
        "sed -i 1d packages/api/src/health.js",
        "Done.",
        "a new file starts with the SPDX line",
      ],
      "does not list the route in ROUTES.md": [
        "sed -i '/health/d' packages/api/ROUTES.md",
        "Done.",
        "ROUTES.md lists every route",
      ],
    },
  },
};

describe("the behaviour tasks", () => {
  let root: string | undefined;
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  test("are in the suite, tagged behaviour", () => {
    expect(
      tasks
        .filter((t) => t.tags.includes("behaviour"))
        .map((t) => t.name)
        .sort(),
    ).toEqual(Object.keys(BEHAVIOUR).sort());
  });
  const cases = Object.entries(BEHAVIOUR).flatMap(([name, b]) => [
    [name, "follows the rule", b.done, b.answer, "ok"] as const,
    ...Object.entries(b.broken).map(
      ([what, [script, answer, why]]) => [name, what, `(${b.done}) && ${script}`, answer, why] as const,
    ),
  ]);
  test.concurrent.each(cases)(
    "%s: the check passes only when the work %s",
    async (name, _what, script, answer, why) => {
      root ??= makeRoot();
      const task = tasks.find((t) => t.name === name)!;
      const runDir = mkdtempSync(path.join(root, `${name}-`));
      const workspace = await prepareWorkspace(task, runDir);
      execFileSync("bash", ["-ec", script], { cwd: workspace, stdio: "pipe" });
      const result = await runCheck(task, workspace, answer);
      expect({ passed: result.passed, output: result.output }).toEqual({
        passed: why === "ok",
        output: why === "ok" ? "ok" : expect.stringContaining(why),
      });
    },
    60_000,
  );
});

describe("the custom command task", () => {
  const task = tasks.find((t) => t.name === "custom-command-release")!;
  const EXPANDED =
    'Release version 2.1.0 with the note given after it: run `node scripts/release.mjs 2.1.0 "Greets in French"`. ' +
    "It sets the version in package.json, regenerates src/version.js and adds the note to CHANGELOG.md; do not edit those files by hand.";
  let root: string | undefined;
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  test("its request expands the task's /release command: $1 and $ARGUMENTS put in", async () => {
    const { expandTemplate, parseCommandTemplate } = await import("../src/context/command-template.js");
    const template = parseCommandTemplate(readFileSync(path.join(task.dir, "commands", "release.md"), "utf8"));
    expect(template.description).toBe("Release a version with a changelog note");
    expect(task.request).toBe('/release 2.1.0 "Greets in French"');
    expect(expandTemplate(template.body, task.request.slice("/release ".length))).toBe(EXPANDED);
  });
  test.concurrent.each([
    ["the release made from the expanded command", EXPANDED, 'node scripts/release.mjs 2.1.0 "Greets in French"', "ok"],
    [
      "the request sent as typed",
      '/release 2.1.0 "Greets in French"',
      'node scripts/release.mjs 2.1.0 "Greets in French"',
      "the request was not the /release command's expansion",
    ],
    ["no trace", undefined, 'node scripts/release.mjs 2.1.0 "Greets in French"', "there is no trace of the run"],
    [
      "the note left out (only $1 used)",
      EXPANDED,
      "node scripts/release.mjs 2.1.0 Release",
      "CHANGELOG.md is not the 2.1.0 entry over the old ones",
    ],
    [
      "the version edited by hand, not released",
      EXPANDED,
      "sed -i 's/2.0.0/2.1.0/' package.json src/version.js",
      "CHANGELOG.md is not the 2.1.0 entry over the old ones",
    ],
  ] as const)(
    "the check on %s",
    async (_what, request, script, why) => {
      root ??= makeRoot();
      const runDir = mkdtempSync(path.join(root, "custom-command-"));
      const workspace = await prepareWorkspace(task, runDir);
      execFileSync("bash", ["-ec", script], { cwd: workspace, stdio: "pipe" });
      if (request !== undefined)
        writeFileSync(
          path.join(runDir, "trace.jsonl"),
          `${JSON.stringify({ type: "run_start", engine: "graph", threadId: "t", model: "m", provider: "p", workspace, task: request })}\n`,
        );
      const result = await runCheck(task, workspace, "Released.");
      expect({ passed: result.passed, output: result.output }).toEqual({
        passed: why === "ok",
        output: why === "ok" ? "ok" : expect.stringContaining(why),
      });
    },
    60_000,
  );
});

describe("the runner", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "eval-test-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function writeTask(name: string, check: string, replay: string): void {
    const taskDir = path.join(dir, name);
    mkdirSync(path.join(taskDir, "workspace"), { recursive: true });
    writeFileSync(
      path.join(taskDir, "task.json"),
      JSON.stringify({ request: "create a file done.txt with content yes" }),
    );
    writeFileSync(path.join(taskDir, "workspace", "README.md"), "# t\n");
    writeFileSync(path.join(taskDir, "check.sh"), check);
    writeFileSync(path.join(taskDir, "replay.jsonl"), replay);
  }
  const header =
    '{"type":"header","format":"mini-cursor-recording","version":1,"model":"hand-written","recordedAt":"2026-12-01T00:00:00.000Z"}\n';
  const answerOnly = `${header}{"type":"response","request":1,"sent":{"outcomes":[]},"message":{"type":"ai","data":{"content":"Nothing to do.","tool_calls":[]}}}\n`;

  test("reports a check that passes on the starting workspace as a broken task", async () => {
    writeTask("always-passes", "exit 0\n", answerOnly);
    const [task] = loadTasks(dir);
    expect(await checkStartingWorkspace(task!, dir)).toEqual({ task: "always-passes", broken: true, output: "" });
  });

  test("refuses to run a suite with a broken task (exit 2)", async () => {
    writeTask("always-passes", "exit 0\n", answerOnly);
    const run = await runEval(["--replay", "--tasks-dir", dir, "--engine", "loop"], 60_000);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "✗ task always-passes is broken: its check passes on the untouched starting workspace, so it proves nothing.",
    );
    expect(run.stdout).toBe("");
  }, 90_000);

  test("the hook task's recording holds the hook's block: without the task's user config the replay diverges", async () => {
    const source = path.join(TASKS_DIR, "hook-blocks-generated");
    const copy = path.join(dir, "hook-blocks-generated");
    cpSync(source, copy, { recursive: true });
    const spec = JSON.parse(readFileSync(path.join(copy, "task.json"), "utf8")) as Record<string, unknown>;
    expect(taskEnv(loadTask(copy), {})).toEqual({ MINI_CURSOR_USER_CONFIG: path.join(copy, "user-config.json") });
    delete spec.userConfig;
    writeFileSync(path.join(copy, "task.json"), JSON.stringify(spec));
    expect(taskEnv(loadTask(copy), {})).toEqual({});
    const json = path.join(dir, "runs.json");
    const run = await runEval(["--replay", "--tasks-dir", dir, "--engine", "graph", "--json", json], 150_000);
    expect(run.code).toBe(1);
    const { records } = JSON.parse(readFileSync(json, "utf8")) as { records: RunRecord[] };
    expect(records.map((r) => [r.task, r.passed])).toEqual([["hook-blocks-generated", false]]);
    // Without the hook the hand edit of the generated file went through, where the recording had it refused.
    expect(readFileSync(records[0]!.trace!, "utf8")).toContain(
      "at model request 3: `src/generated/messages.js` succeeded, where the recorded run was refused (by a project rule or a hook).",
    );
    rmSync(path.dirname(path.dirname(records[0]!.workspace!)), { recursive: true, force: true });
  }, 180_000);

  test("the custom command task's request is the /release command of its commands folder: without the folder the run fails its check", async () => {
    const source = path.join(TASKS_DIR, "custom-command-release");
    const copy = path.join(dir, "custom-command-release");
    cpSync(source, copy, { recursive: true });
    expect(taskEnv(loadTask(copy), {})).toEqual({ MINI_CURSOR_COMMANDS_DIR: path.join(copy, "commands") });
    const spec = JSON.parse(readFileSync(path.join(copy, "task.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(path.join(copy, "task.json"), JSON.stringify({ ...spec, commands: "missing" }));
    expect(() => loadTask(copy)).toThrow(
      "task custom-command-release: task.json names commands missing, which is not in its folder",
    );
    delete spec.commands;
    writeFileSync(path.join(copy, "task.json"), JSON.stringify(spec));
    expect(taskEnv(loadTask(copy), {})).toEqual({});
    const json = path.join(dir, "runs.json");
    const run = await runEval(["--replay", "--tasks-dir", dir, "--engine", "loop", "--json", json], 150_000);
    expect(run.code).toBe(1);
    const { records } = JSON.parse(readFileSync(json, "utf8")) as { records: RunRecord[] };
    // The task went to the model as typed; the recording played on, and the check saw the request.
    expect(records.map((r) => [r.task, r.passed, r.checkOutput])).toEqual([
      [
        "custom-command-release",
        false,
        `the request was not the /release command's expansion: ${JSON.stringify('/release 2.1.0 "Greets in French"')}`,
      ],
    ]);
    rmSync(path.dirname(path.dirname(records[0]!.workspace!)), { recursive: true, force: true });
  }, 180_000);

  test("a failed run keeps its workspace and trace, and --replay exits 1", async () => {
    writeTask("needs-file", '[ -f done.txt ] || { echo "done.txt is missing"; exit 1; }\n', answerOnly);
    const json = path.join(dir, "runs.json");
    const run = await runEval(["--replay", "--tasks-dir", dir, "--engine", "graph", "--json", json], 120_000);
    expect(run.code).toBe(1);
    const { records } = JSON.parse(readFileSync(json, "utf8")) as { records: RunRecord[] };
    expect(records).toHaveLength(1);
    const [r] = records;
    expect(r).toMatchObject({
      task: "needs-file",
      engine: "graph",
      model: "replay",
      passed: false,
      reason: "done",
      exitCode: 0,
      checkOutput: "done.txt is missing",
      finalText: "Nothing to do.",
    });
    expect(existsSync(path.join(r!.workspace!, "README.md"))).toBe(true);
    expect(readFileSync(r!.trace!, "utf8")).toContain('"type":"run_end"');
    expect(run.stdout).toContain(
      `✗ needs-file (graph, replay, run 1): the check failed (the agent stopped: done)\n    done.txt is missing\n    workspace ${r!.workspace}\n    trace     ${r!.trace}`,
    );
    rmSync(path.dirname(path.dirname(r!.workspace!)), { recursive: true, force: true });
  }, 150_000);

  test("without a provider, --replay or --offline, says what to configure (exit 2)", async () => {
    const run = await runEval(["--tasks", "hello-file"], 60_000);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "eval: no model provider is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a provider other than OpenAI) in the environment or .env, " +
        "or run with --replay (the recorded trajectories) or --offline (the embedded offline model)\n",
    );
  }, 90_000);

  test("runs the CLI with --json, the task's approval mode and its recording", () => {
    const task = { ...tasks.find((t) => t.name === "hello-file")!, approval: "suggest" as const, maxSteps: 5 };
    expect(cliArgs(task, "loop", { kind: "replay" }, "/ws")).toEqual([
      "--workspace",
      "/ws",
      "--json",
      "--no-color",
      "--engine",
      "loop",
      "--approval",
      "suggest",
      "--max-steps",
      "5",
      "--replay",
      path.join(TASKS_DIR, "hello-file", "replay.jsonl"),
      "create a file hello.txt with content Hello",
    ]);
    expect(
      cliArgs(tasks.find((t) => t.name === "hello-file")!, "graph", { kind: "provider", model: "gpt-4o" }, "/ws"),
    ).toEqual([
      "--workspace",
      "/ws",
      "--json",
      "--no-color",
      "--engine",
      "graph",
      "--approval",
      "full-auto",
      "--model",
      "gpt-4o",
      "create a file hello.txt with content Hello",
    ]);
    const base = { OPENAI_API_KEY: "sk-x", MINI_CURSOR_MODEL: "m", INIT_CWD: "/x", PATH: "/bin" };
    expect(cliEnv({ kind: "provider" }, base)).toEqual({
      OPENAI_API_KEY: "sk-x",
      MINI_CURSOR_MODEL: "m",
      PATH: "/bin",
      NO_COLOR: "1",
    });
    expect(cliEnv({ kind: "offline" }, base)).toEqual({ PATH: "/bin", NO_COLOR: "1", MINI_CURSOR_DOTENV: "off" });
  });

  test("selects tasks by name and names the unknown ones", () => {
    expect(selectTasks(tasks, ["hello-file", "crlf-edit"]).map((t) => t.name)).toEqual(["crlf-edit", "hello-file"]);
    expect(() => selectTasks(tasks, ["hello-file", "nope", "nada"])).toThrow(
      "unknown tasks: nope, nada (see evals/tasks/)",
    );
  });
});

describe("the numbers", () => {
  test("Wilson 95% interval", () => {
    const round = ([a, b]: [number, number]) => [Number(a.toFixed(4)), Number(b.toFixed(4))];
    expect(round(wilson(5, 10))).toEqual([0.2366, 0.7634]);
    expect(round(wilson(10, 10))).toEqual([0.7225, 1]);
    expect(round(wilson(0, 10))).toEqual([0, 0.2775]);
    expect(round(wilson(1, 1))).toEqual([0.2065, 1]);
    expect(round(wilson(42, 42))).toEqual([0.9162, 1]);
    expect(wilson(0, 0)).toEqual([0, 1]);
  });

  test("median", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBe(0);
  });

  test("reads a run's JSON Lines trace", () => {
    const trace = [
      '{"type":"run_start","engine":"graph","threadId":"t","model":"gpt-4o-mini","provider":"openai","workspace":"/w","task":"x"}',
      '{"type":"tool_call","step":1,"id":"a","name":"execute_command","args":{"command":"rm -rf /"}}',
      '{"type":"approval","request":{"toolCallId":"a","tool":"execute_command","args":{},"reason":"dangerous"},"response":{"decision":"deny"}}',
      "not json",
      '{"type":"final","text":"I did not run it."}',
      '{"type":"run_end","reason":"done","steps":2,"toolCalls":1,"usage":{"input":2100,"output":80,"estimated":false,"cost":0.0004},"durationMs":900}',
    ].join("\n");
    expect(summarizeTrace(trace)).toEqual({
      model: "gpt-4o-mini",
      reason: "done",
      steps: 2,
      toolCalls: 1,
      approvals: 1,
      tokensIn: 2100,
      tokensOut: 80,
      tokensEstimated: false,
      cost: 0.0004,
      finalText: "I did not run it.",
    });
  });

  test("the summary table: one row per engine and model", () => {
    const records = [
      record({
        task: "a",
        engine: "graph",
        passed: true,
        tokensIn: 1000,
        tokensOut: 100,
        wallMs: 2000,
        toolCalls: 3,
        cost: 0.002,
      }),
      record({
        task: "b",
        engine: "graph",
        passed: false,
        tokensIn: 3000,
        tokensOut: 300,
        wallMs: 4000,
        toolCalls: 4,
        approvals: 1,
        cost: 0.004,
      }),
      record({
        task: "a",
        engine: "loop",
        passed: true,
        tokensIn: 12_500,
        tokensOut: 90,
        wallMs: 1500,
        toolCalls: 2,
        tokensEstimated: true,
      }),
      record({
        task: "b",
        engine: "loop",
        passed: true,
        tokensIn: 500,
        tokensOut: 10,
        wallMs: 500,
        toolCalls: 1,
        tokensEstimated: true,
      }),
    ];
    expect(formatSummary(summarize(records))).toBe(
      [
        "engine   model    success     95% CI   tokens in   tokens out      cost    wall   tool calls   approvals",
        "graph    m        1/2 50%     9%–91%        2.0k          200   $0.0060   3.0 s          3.5           1",
        "loop     m       2/2 100%   34%–100%       6.5k~          50~         —   1.0 s          1.5           0",
      ].join("\n"),
    );
    expect(formatPerTask(records)).toBe(
      ["task   graph/m   loop/m", "a        ✓ 1/1    ✓ 1/1", "b        ✗ 0/1    ✓ 1/1"].join("\n"),
    );
  });
});

describe("npm run eval -- --replay", () => {
  test("runs two tasks through both engines and prints the table", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "eval-e2e-"));
    try {
      const json = path.join(dir, "runs.json");
      const run = await runEval(
        [
          "--replay",
          "--engine",
          "both",
          "--tasks",
          "hello-file,fix-failing-test",
          "--concurrency",
          "2",
          "--json",
          json,
        ],
        240_000,
      );
      expect(run.stderr).toContain("Running 4 runs (2 tasks × graph+loop × replay × 1), 2 at once");
      expect(run.code).toBe(0);
      const { records } = JSON.parse(readFileSync(json, "utf8")) as { records: RunRecord[] };
      expect(records.map((r) => [r.task, r.engine, r.passed, r.reason, r.exitCode])).toEqual([
        ["fix-failing-test", "graph", true, "done", 0],
        ["fix-failing-test", "loop", true, "done", 0],
        ["hello-file", "graph", true, "done", 0],
        ["hello-file", "loop", true, "done", 0],
      ]);
      expect(records.map((r) => r.toolCalls)).toEqual([4, 4, 1, 1]);
      expect(records.every((r) => r.workspace === undefined)).toBe(true);
      const lines = run.stdout.trim().split("\n");
      expect(lines[0]).toMatch(
        /^engine +model +success +95% CI +tokens in +tokens out +cost +wall +tool calls +approvals$/,
      );
      expect(lines[1]).toMatch(/^graph +replay +2\/2 100% +34%–100% +\S+~ +\S+~ +— +[\d.]+ s +2\.5 +0$/);
      expect(lines[2]).toMatch(/^loop +replay +2\/2 100% +34%–100% +\S+~ +\S+~ +— +[\d.]+ s +2\.5 +0$/);
      expect(lines.slice(4)).toEqual([
        "task               graph/replay   loop/replay",
        "fix-failing-test          ✓ 1/1         ✓ 1/1",
        "hello-file                ✓ 1/1         ✓ 1/1",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

describe("npm run eval -- --model", () => {
  test("needs only a provider's key and a model name: tokens and cost come from the provider", async () => {
    const server = await startOpenAIServer([
      {
        toolCalls: [{ name: "write_file", args: { filePath: "hello.txt", content: "Hello\n" } }],
        usage: { prompt_tokens: 1200, completion_tokens: 30 },
      },
      { content: "Created hello.txt.", usage: { prompt_tokens: 1300, completion_tokens: 10 } },
    ]);
    const dir = mkdtempSync(path.join(os.tmpdir(), "eval-provider-"));
    try {
      const json = path.join(dir, "runs.json");
      const env = { ...cliEnv({ kind: "offline" }), OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: server.url };
      const run = await runEval(
        ["--model", "gpt-4o-mini", "--engine", "loop", "--tasks", "hello-file", "--json", json],
        120_000,
        env,
      );
      expect(run.code).toBe(0);
      expect(server.requests.map((r) => r.model)).toEqual(["gpt-4o-mini", "gpt-4o-mini"]);
      const { records } = JSON.parse(readFileSync(json, "utf8")) as { records: RunRecord[] };
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({
        task: "hello-file",
        engine: "loop",
        model: "gpt-4o-mini",
        passed: true,
        tokensIn: 2500,
        tokensOut: 40,
        tokensEstimated: false,
        toolCalls: 1,
        finalText: "Created hello.txt.",
      });
      expect(records[0]!.cost).toBeCloseTo((2500 * 0.15 + 40 * 0.6) / 1e6, 10);
      expect(run.stdout.split("\n")[2]).toMatch(
        /^loop +gpt-4o-mini +1\/1 100% +21%–100% +2\.5k +40 +\$0\.0004 +[\d.]+ s +1 +0$/,
      );
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
