import type { Stats } from "node:fs";
import { binaryKindFromExtension, detectBinary, sizeOverLimit } from "../workspace/files.js";
import { resolvePath, type Workspace } from "../workspace/paths.js";
import type { Hunk } from "../workspace/patch-parse.js";
import { applyHunksStreamed, type ByteSplice } from "../workspace/patch-stream.js";
import { openVerified } from "../workspace/verified-open.js";
import type { ToolContext } from "./context.js";
import { unifiedDiff } from "./edit-file.js";
import { MAX_STREAM_EDIT_BYTES, writeSpliced } from "./edit-big.js";
import { MAX_EDIT_BYTES } from "./edit-target.js";
import { fingerprintFile } from "./read-tracker.js";

/**
 * apply_patch on a file over MAX_EDIT_BYTES (issue 30): the hunks are matched streaming
 * (workspace/patch-stream.ts, the same rules as in memory) and the file is rewritten through a
 * temp file beside it and an atomic rename (tools/edit-big.ts), so memory stays bounded whatever
 * the size. Such a file is only updated in place: no add, delete or move, and one per patch, so a
 * patch stays all or nothing (it is written last, after every other file).
 */

export interface BigTarget {
  absolute: string;
  display: string;
  userPath: string;
  stat: Stats;
}

/** What a streamed update will write, once planned. */
export interface BigUpdate {
  splices: ByteSplice[];
  /** Per hunk, from its first line now: the lines it removed and added (for the diff). */
  changed: Array<{ first: number; removed: string[]; added: string[] }>;
}

/**
 * The file at `userPath` when it is a regular file over MAX_EDIT_BYTES (undefined otherwise, for
 * the in-memory path), or why it cannot be patched.
 */
export async function bigPatchTarget(
  ctx: ToolContext,
  ws: Workspace,
  userPath: string,
  threadId: string | undefined,
): Promise<BigTarget | string | undefined> {
  const target = await resolvePath(ws, userPath, { refuseHardLinks: true });
  if (!target.exists || target.isDirectory) return undefined;
  const opened = await openVerified(ws, target.absolute, userPath, { refuseHardLinks: true });
  try {
    const { stat } = opened;
    if (!stat.isFile() || stat.size <= MAX_EDIT_BYTES) return undefined;
    const display = target.display;
    if (stat.size > MAX_STREAM_EDIT_BYTES) {
      const sizes = sizeOverLimit(stat.size, MAX_STREAM_EDIT_BYTES);
      return `Error: ${display} is ${sizes.size}, larger than apply_patch handles (${sizes.limit}). Use a command (e.g. sed) instead.`;
    }
    const binary = binaryKindFromExtension(target.absolute) ?? (await detectBinary(opened.path));
    if (binary) return `Error: ${display} is a binary file (${binary}); apply_patch changes text only.`;
    if (ctx.reads.check(threadId, target.absolute, { size: stat.size, mtimeMs: stat.mtimeMs }) !== "ok")
      return `Error: ${display} has not been read in this conversation, or has changed since you last read it. Read it with read_file first, then patch it.`;
    return { absolute: target.absolute, display, userPath, stat };
  } finally {
    await opened.handle.close();
  }
}

/** Matches the hunks in the file, streaming; the splices to write, or why the patch does not apply. */
export async function planBigUpdate(
  ws: Workspace,
  target: BigTarget,
  hunks: readonly Hunk[],
): Promise<BigUpdate | string> {
  const opened = await openVerified(ws, target.absolute, target.userPath, { refuseHardLinks: true });
  try {
    if (opened.stat.size !== target.stat.size || opened.stat.mtimeMs !== target.stat.mtimeMs)
      return `${target.display} changed while the patch was planned (a command or the user wrote it). Read it again with read_file, then patch it.`;
    const result = await applyHunksStreamed(opened.handle, opened.stat.size, hunks, target.display);
    if (!result.ok) return result.message;
    return { splices: result.splices, changed: result.changed };
  } finally {
    await opened.handle.close();
  }
}

/** Writes the planned update (through a temp file and a rename) and counts the file as read. */
export async function commitBigUpdate(
  ctx: ToolContext,
  threadId: string | undefined,
  ws: Workspace,
  target: BigTarget,
  update: BigUpdate,
): Promise<void> {
  const opened = await openVerified(ws, target.absolute, target.userPath, { refuseHardLinks: true });
  try {
    await writeSpliced(ws, target.absolute, target.userPath, opened.handle, target.stat, update.splices);
  } finally {
    await opened.handle.close();
  }
  ctx.reads.record(threadId, target.absolute, await fingerprintFile(target.absolute));
}

/** Whether the update changes any text (a line's ending aside). */
export function bigUpdateChanges(update: BigUpdate): boolean {
  return update.changed.some((c) => c.removed.join("\n") !== c.added.join("\n"));
}

/** A unified diff of the changed regions only, with the file's own line numbers. */
export function bigUpdateDiff(display: string, update: BigUpdate): string {
  let shift = 0;
  const parts: string[] = [];
  for (const c of update.changed) {
    const text = (lines: string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);
    const diff = unifiedDiff(display, text(c.removed), text(c.added));
    const [head, ...hunks] = diff.split(/\n(?=@@ )/);
    const oldFirst = c.first - shift;
    shift += c.added.length - c.removed.length;
    const renumbered = hunks.map((h) =>
      h.replace(
        /^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@/,
        (_m, a: string, b = "", d: string, e = "") =>
          `@@ -${Number(a) + oldFirst - 1}${b} +${Number(d) + c.first - 1}${e} @@`,
      ),
    );
    parts.push(parts.length === 0 ? [head, ...renumbered].join("\n") : renumbered.join("\n"));
  }
  return parts.join("\n");
}
