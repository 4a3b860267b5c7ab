import { writeFileSync } from "node:fs";
import path from "node:path";
import type { HookReport, ToolHooks } from "../../src/guard/hooks.js";
import type { HookSpec } from "../../src/security/hooks-config.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * PreCompact before the automatic summary near the context budget (agent/task-hooks.ts
 * autoCompactHooks, called by the step both engines share): the hook runs once, before the
 * summary request, with Claude Code's payload and `trigger: "auto"`.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

/** Hooks that record what each got and the model calls made by then, and pass. */
function recordingHooks(specs: HookSpec[], modelCalls: () => number) {
  const seen: { input: Record<string, unknown>; callsBefore: number }[] = [];
  const reports: HookReport[] = [];
  const hooks: ToolHooks = {
    specs,
    run: async (_spec, input) => {
      seen.push({ input: JSON.parse(input), callsBefore: modelCalls() });
      return { status: "exited", exitCode: 0, stdout: "", stderr: "", durationMs: 1 };
    },
    report: (r) => reports.push(r),
  };
  return { hooks, seen, reports };
}

describe.each(["graph", "loop"] as const)("the %s engine", (kind) => {
  test("PreCompact runs before the automatic summary, with trigger auto", async () => {
    const files = ["a", "b", "c", "d", "e", "f", "g"];
    const text = (ch: string) => Array.from({ length: 50 }, () => ch.repeat(99)).join("\n");
    for (const f of files) writeFileSync(path.join(tmp.dir, `${f}.txt`), text(f));
    const spec: HookSpec = { event: "PreCompact", matcher: "auto", command: "log", label: "log", file: "c.json" };
    let calls = () => 0;
    const rec = recordingHooks([spec], () => calls());
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        ...files.map((f) => ({ toolCalls: [{ name: "read_file", args: { filePath: `${f}.txt` } }] })),
        "SUMMARY: read a.txt to f.txt.",
        "All files are fine.",
      ],
      { contextTokens: 16_000 },
      { hooks: rec.hooks },
    );
    calls = () => h.model.calls.length;
    const summary = await h.run("check the seven files");
    expect(summary.reason).toBe("done");
    expect(eventsOf(h.events, "compaction")).toHaveLength(1);
    // Once, after the seven steps' requests and before the summary's.
    expect(rec.seen).toEqual([
      {
        input: {
          hook_event_name: "PreCompact",
          session_id: "t1",
          transcript_path: null,
          cwd: tmp.dir,
          permission_mode: "bypassPermissions",
          approval_mode: "full-auto",
          trigger: "auto",
          custom_instructions: "",
        },
        callsBefore: 7,
      },
    ]);
    expect(rec.reports.map((r) => [r.event, r.tool, r.outcome])).toEqual([["PreCompact", "auto", "passed"]]);
  });
});
