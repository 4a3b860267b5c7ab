import { conversationOf } from "./read-tracker.js";
import { z } from "zod";
import { countTextLines, formatSize } from "../workspace/files.js";
import { resolvePath, type Workspace } from "../workspace/paths.js";
import { applyHunks, HUNK_MATCH_TEXT } from "../workspace/patch-apply.js";
import { type Hunk, parsePatch, PatchParseError, patchPaths, type PatchOp } from "../workspace/patch-parse.js";
import { unlinkInWorkspace, writeInWorkspace } from "../workspace/verified-open.js";
import { findPlaceholder } from "../workspace/text-edit.js";
import { APPLY_PATCH_PEERS, withPeerArguments } from "./aliases.js";
import {
  type BigTarget,
  type BigUpdate,
  bigPatchTarget,
  bigUpdateChanges,
  bigUpdateDiff,
  commitBigUpdate,
  planBigUpdate,
} from "./apply-patch-big.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { withPathLocks } from "./path-lock.js";
import { unifiedDiff, type EditArtifact } from "./edit-file.js";
import { commitText, loadEditTarget, MAX_EDIT_BYTES } from "./edit-target.js";
import { MAX_STREAM_EDIT_BYTES } from "./edit-big.js";
import { toolErrorMessage, ToolFailure } from "../guard/failure.js";

/** Longest patch accepted in one call. */
export const MAX_PATCH_CHARS = 1024 * 1024;

const DESCRIPTION = `Edit files with a patch: add, delete, update or move several files in one call, all or nothing. Paths are relative to the workspace root.
Format (no line numbers; each change is found by its context):
*** Begin Patch
*** Update File: src/app.py
@@ def greet():
-    print("Hi")
+    print("Hello")
*** Add File: docs/notes.md
+first line of the new file
*** Delete File: old.txt
*** Update File: a.js
*** Move to: b.js
@@
 context line
-removed line
+added line
*** End Patch
- In an update, each hunk starts with "@@" (optionally followed by a line of the file, such as a class or function signature, that comes before the change). Lines start with " " (context, unchanged), "-" (removed) or "+" (added). Give about 3 lines of context before and after each change; add "@@" lines when that is not unique. "*** End of File" after a hunk anchors it at the end of the file.
- Update and Delete need the file read with read_file in this conversation and unchanged since. Add creates a file (and its folders) that does not exist yet.
- If any hunk does not apply, nothing is written. Context that differs only in indentation, trailing or inner spacing, or Unicode punctuation still matches; the result says so.
- Files keep their line endings line by line (a replaced \\r\\n line stays \\r\\n), BOM and final newline (or its absence). Context that differs only in Unicode normal form (NFC/NFD) matches. Never use placeholders such as "... existing code ..." in added lines.
- A patch is at most ${MAX_PATCH_CHARS / 1024} KB. Text files up to ${MAX_EDIT_BYTES / 1024 / 1024} MB are patched in memory; bigger ones, up to ${MAX_STREAM_EDIT_BYTES / 1024 / 1024 / 1024} GB, are updated streaming by the same rules (memory bounded), in place only (no add, delete or move) and one per patch; there a hunk that does not apply is not quoted back with the closest lines.`;

const schemaObject = z.strictObject({
  input: z
    .string()
    .describe(`The whole patch, from "*** Begin Patch" to "*** End Patch" (at most ${MAX_PATCH_CHARS / 1024} KB).`),
});
/** `patch` and `diff` are accepted for `input`. */
const schema = withPeerArguments(schemaObject, APPLY_PATCH_PEERS);
type ApplyPatchInput = z.infer<typeof schemaObject>;

/** One file's state while a patch is planned. */
interface FileState {
  absolute: string;
  display: string;
  /** The text before the patch; undefined when the file did not exist. */
  original: string | undefined;
  /** The text after the ops so far; undefined when it does not exist (deleted or never there). */
  current: string | undefined;
  /** A file over MAX_EDIT_BYTES, updated streaming (apply-patch-big.ts); `original`/`current` are then unused. */
  big?: { target: BigTarget; update?: BigUpdate };
}

interface PatchPlan {
  ok: true;
  files: FileState[];
  /** One line per operation, for the result. */
  summary: string[];
  /** How many files the operations named (a move counts once). */
  fileCount: number;
}

type Plan = PatchPlan | { ok: false; message: string };

const refuse = (message: string): Plan => ({
  ok: false,
  message: message.startsWith("Error") ? message : `Error: ${message}`,
});

/** Loads files on first use, so every path is checked (and read-checked) once, before anything is written. */
class PatchFiles {
  private readonly byPath = new Map<string, FileState>();
  constructor(
    private readonly ctx: ToolContext,
    readonly ws: Workspace,
    private readonly threadId: string | undefined,
  ) {}

  async get(userPath: string): Promise<FileState | string> {
    const resolved = await resolvePath(this.ws, userPath, { refuseHardLinks: true });
    const known = this.byPath.get(resolved.absolute);
    if (known) return known;
    const big = await bigPatchTarget(this.ctx, this.ws, userPath, this.threadId);
    if (typeof big === "string") return big;
    let state: FileState;
    if (big) state = { absolute: big.absolute, display: big.display, original: "", current: "", big: { target: big } };
    else {
      const loaded = await loadEditTarget(this.ctx, this.ws, userPath, this.threadId, "apply_patch");
      if (!loaded.ok) return loaded.message;
      const { absolute, display, exists, before } = loaded.target;
      state = { absolute, display, original: exists ? before : undefined, current: exists ? before : undefined };
    }
    this.byPath.set(state.absolute, state);
    return state;
  }

  all(): FileState[] {
    return [...this.byPath.values()];
  }
}

const hunkCount = (n: number) => `${n} ${n === 1 ? "hunk" : "hunks"}`;

/** Why an update's "+" lines are refused: placeholder text that its other lines do not hold. */
function placeholderProblem(display: string, hunks: readonly Hunk[]): string | undefined {
  const text = (added: boolean) =>
    hunks.flatMap((h) => h.lines.filter((l) => (l.kind === "+") === added).map((l) => l.text)).join("\n");
  const placeholder = findPlaceholder(text(true), text(false));
  if (placeholder)
    return `a "+" line for ${display} is placeholder text ("${placeholder}"); it would replace the code it stands for. Write the real lines.`;
  return undefined;
}

/** An operation on a file over MAX_EDIT_BYTES: only an update in place, streamed. */
async function planBigOp(
  ws: Workspace,
  state: FileState,
  op: PatchOp,
  summary: string[],
  where: string,
): Promise<string | undefined> {
  const big = state.big!;
  const size = formatSize(big.target.stat.size);
  if (op.kind === "add")
    return `${state.display} already exists ${where}. Use "*** Update File: ${op.path}" to change it.`;
  if (op.kind === "delete" || op.moveTo !== undefined)
    return `${state.display} is ${size}: apply_patch only updates a file over ${formatSize(MAX_EDIT_BYTES)} in place ${where}. Delete or move it with a command (rm, mv).`;
  if (big.update) return `${state.display} is ${size}: update it in one "*** Update File" section per patch ${where}.`;
  const placeholder = placeholderProblem(state.display, op.hunks);
  if (placeholder) return placeholder;
  const planned = await planBigUpdate(ws, big.target, op.hunks);
  if (typeof planned === "string") return planned;
  if (!bigUpdateChanges(planned)) return `the hunks for ${state.display} change nothing ${where}.`;
  big.update = planned;
  summary.push(`M ${state.display} (${hunkCount(op.hunks.length)}; ${size}, streamed)`);
  return undefined;
}

async function planOp(
  files: PatchFiles,
  op: PatchOp,
  summary: string[],
  named: Set<string>,
): Promise<string | undefined> {
  const state = await files.get(op.path);
  if (typeof state === "string") return state;
  named.add(state.absolute);
  const where = `(patch line ${op.patchLine})`;
  if (state.big) return planBigOp(files.ws, state, op, summary, where);
  switch (op.kind) {
    case "add": {
      if (state.current !== undefined && state.current.replace(/^\uFEFF/, "") !== "") {
        return `${state.display} already exists ${where}. Use "*** Update File: ${op.path}" to change it.`;
      }
      const placeholder = findPlaceholder(op.lines.join("\n"), "");
      if (placeholder)
        return `the added file ${state.display} contains placeholder text ("${placeholder}"). Write the real content.`;
      state.current = op.lines.length === 0 ? "" : `${op.lines.join("\n")}\n`;
      const lines = countTextLines(state.current);
      summary.push(`A ${state.display} (${lines} ${lines === 1 ? "line" : "lines"})`);
      return undefined;
    }
    case "delete": {
      if (state.current === undefined) return `${state.display} does not exist, so it cannot be deleted ${where}.`;
      state.current = undefined;
      summary.push(`D ${state.display}`);
      return undefined;
    }
    case "update": {
      if (state.current === undefined) {
        return `${state.display} does not exist ${where}. Use "*** Add File: ${op.path}" to create it.`;
      }
      const placeholder = placeholderProblem(state.display, op.hunks);
      if (placeholder) return placeholder;
      const result = await applyHunks(state.current, op.hunks, state.display);
      if (!result.ok) return result.message;
      const fuzzy = result.matches
        .map((m, i) => (m === "exact" ? undefined : `hunk ${i + 1} matched ${HUNK_MATCH_TEXT[m]}`))
        .filter((s): s is string => s !== undefined);
      const detail = op.hunks.length === 0 ? "" : ` (${[hunkCount(op.hunks.length), ...fuzzy].join("; ")})`;
      if (op.moveTo === undefined) {
        if (result.text === state.current) return `the hunks for ${state.display} change nothing ${where}.`;
        state.current = result.text;
        summary.push(`M ${state.display}${detail}`);
        return undefined;
      }
      const dest = await files.get(op.moveTo);
      if (typeof dest === "string") return dest;
      if (dest.absolute !== state.absolute) {
        if (dest.current !== undefined)
          return `cannot move ${state.display} to ${dest.display}: it already exists ${where}.`;
        dest.current = result.text;
        state.current = undefined;
      } else {
        state.current = result.text;
      }
      summary.push(`R ${state.display} -> ${dest.display}${detail}`);
      return undefined;
    }
  }
}

async function planPatch(ctx: ToolContext, input: ApplyPatchInput, threadId: string | undefined): Promise<Plan> {
  if (input.input.length > MAX_PATCH_CHARS) {
    return refuse(
      `the patch is ${input.input.length} characters, more than ${MAX_PATCH_CHARS}. Split it into several calls.`,
    );
  }
  let ops: PatchOp[];
  try {
    ops = parsePatch(input.input);
  } catch (err) {
    if (err instanceof PatchParseError)
      return refuse(`the patch could not be read: ${err.message} Nothing was changed.`);
    throw err;
  }
  const files = new PatchFiles(ctx, await ctx.workspace(), threadId);
  const summary: string[] = [];
  const named = new Set<string>();
  for (const op of ops) {
    const problem = await planOp(files, op, summary, named);
    if (problem)
      return refuse(
        `${problem.replace(/^Error: /, "")}${/Nothing was (changed|written)/.test(problem) ? "" : " Nothing was written."}`,
      );
  }
  const bigs = files.all().filter((f) => f.big?.update);
  if (bigs.length > 1)
    return refuse(
      `the patch changes ${bigs.length} files over ${formatSize(MAX_EDIT_BYTES)} (${bigs.map((f) => f.display).join(", ")}); one such file per patch keeps it all or nothing. Split it into one patch per big file. Nothing was written.`,
    );
  const changed = files.all().filter((f) => (f.big ? f.big.update !== undefined : f.current !== f.original));
  return { ok: true, files: changed, summary, fileCount: named.size };
}

/**
 * Writes every change; on a failure, puts back what was already written (best effort) and
 * rethrows. A file over MAX_EDIT_BYTES (at most one) is written last: it cannot be put back.
 */
async function commit(ctx: ToolContext, threadId: string | undefined, files: readonly FileState[]): Promise<void> {
  const done: FileState[] = [];
  const ws = await ctx.workspace();
  try {
    // Writes first, deletions last: a failed write leaves every file that was to be deleted in place.
    for (const f of files.filter((x) => !x.big && x.current !== undefined)) {
      await commitText(ctx, threadId, f.absolute, f.current!);
      done.push(f);
    }
    // Deletions go through the verified folder's descriptor, like writes: a folder swapped for a
    // symlink after the file was read cannot turn the delete into one outside the workspace.
    for (const f of files.filter((x) => !x.big && x.current === undefined)) {
      await unlinkInWorkspace(ws, f.absolute, f.display);
      done.push(f);
    }
    for (const f of files.filter((x) => x.big?.update))
      await commitBigUpdate(ctx, threadId, ws, f.big!.target, f.big!.update!);
  } catch (err) {
    for (const f of done.reverse()) {
      if (f.original === undefined) await unlinkInWorkspace(ws, f.absolute, f.display).catch(() => undefined);
      else await writeInWorkspace(ws, f.absolute, f.display, f.original).catch(() => undefined);
    }
    throw err;
  }
}

function patchDiff(files: readonly FileState[]): string {
  return files
    .map((f) =>
      f.big?.update
        ? bigUpdateDiff(f.display, f.big.update)
        : unifiedDiff(f.display, f.original ?? "", f.current ?? ""),
    )
    .join("\n");
}

async function applyPatch(
  ctx: ToolContext,
  input: ApplyPatchInput,
  threadId: string | undefined,
): Promise<[string, EditArtifact | undefined]> {
  // Read, planned and written under every named file's lock: a concurrent edit of one of them waits (tools/path-lock.ts).
  const plan = await withPathLocks(await ctx.workspace(), patchPaths(input.input), async () => {
    const planned = await planPatch(ctx, input, threadId);
    if (!planned.ok) throw new ToolFailure(planned.message);
    await commit(ctx, threadId, planned.files);
    return planned;
  });
  const count = plan.fileCount === 1 ? "1 file" : `${plan.fileCount} files`;
  return [`Applied the patch to ${count}:\n${plan.summary.join("\n")}`, { diff: patchDiff(plan.files) }];
}

/** For the approval prompt: the diff of every file the patch would change, or why it would be refused. */
export async function previewPatch(
  ctx: ToolContext,
  input: ApplyPatchInput,
  threadId?: string,
): Promise<string | undefined> {
  try {
    const plan = await planPatch(ctx, input, threadId);
    if (!plan.ok) return `(this patch would be refused: ${plan.message.replace(/^Error: /, "")})`;
    return patchDiff(plan.files);
  } catch (err) {
    return `(this patch would fail: ${toolErrorMessage(err)})`;
  }
}

export function applyPatchTool(ctx: ToolContext) {
  return declared(
    tool((input, config) => applyPatch(ctx, input, conversationOf(config)), {
      name: "apply_patch",
      description: DESCRIPTION,
      schema,
      responseFormat: "content_and_artifact",
    }),
    // Every file the patch adds, updates, deletes or moves to (a patch that does not parse touches nothing).
    { kind: "edit", paths: { input: "patch" } },
  );
}
