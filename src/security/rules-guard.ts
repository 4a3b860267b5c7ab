import { lstatSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { isRefusedFile, readRegularFileSync } from "../regular-file.js";
import path from "node:path";
import { openWorkspace, resolvePath } from "../workspace/paths.js";
import { RULES_FILES } from "./rules.js";

/**
 * Calls that could create or change the project's command rules ask in every approval mode:
 * a model that may write its own allow rules has no rules. Kept apart from the classifier: a
 * plain check of the command text, and of where a file tool's path really leads.
 */

/** What a command must name to reach a rules file: `mini-cursor.config.json`, or the `.mini-cursor` folder. */
const RULES_NAMES = [...new Set(RULES_FILES.map((f) => f.split("/")[0]!))];

/**
 * Why a command must ask because it may create or change a rules file, or undefined. Any
 * mention of a rules file's name (or of the `.mini-cursor` folder) counts, whatever the program
 * (`cp`, `mv`, `curl -O`, `wget`, `tee`, a redirection, a script): reading it is rare enough.
 */
export function commandRulesReason(command: string): string | undefined {
  const hit = RULES_NAMES.find((name) => command.includes(name));
  return hit ? `may create or change the project's command rules (it names ${hit})` : undefined;
}

/** Why a write_file/edit_file call must ask: its path leads (also through a symlink, dangling or not) to a rules file. */
export async function fileRulesReason(workspace: string, filePath: string): Promise<string | undefined> {
  if (!filePath) return undefined;
  try {
    const ws = await openWorkspace(workspace);
    const target = await resolvePath(ws, filePath);
    const rel = path.relative(ws.root, target.absolute).split(path.sep).join("/");
    if ((RULES_FILES as readonly string[]).includes(rel))
      return `changes the project's command rules (${filePath} is ${rel})`;
  } catch {
    // Outside the workspace or invalid: the tool refuses it anyway.
  }
  return undefined;
}

type Entry =
  | { kind: "missing" }
  | { kind: "file"; data: Buffer; mode: number }
  | { kind: "link"; target: string }
  | { kind: "other" };

function entryOf(file: string): Entry {
  try {
    const st = lstatSync(file);
    if (st.isSymbolicLink()) return { kind: "link", target: readlinkSync(file) };
    // Read on a descriptor checked again: one swapped for a FIFO since the lstat is not waited on.
    if (st.isFile()) return { kind: "file", data: readRegularFileSync(file), mode: st.mode & 0o777 };
    return { kind: "other" };
  } catch (err) {
    return isRefusedFile(err) ? { kind: "other" } : { kind: "missing" };
  }
}

function sameEntry(a: Entry, b: Entry): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.data.equals(b.data);
  if (a.kind === "link" && b.kind === "link") return a.target === b.target;
  return true;
}

/** Puts `entry` back at `file`, never writing through a symlink (the parent must be a plain folder). */
function restore(file: string, entry: Entry, workspace: string): void {
  rmSync(file, { recursive: true, force: true });
  if (entry.kind === "missing" || entry.kind === "other") return;
  const parent = path.dirname(file);
  if (parent !== workspace && !lstatSync(parent).isDirectory()) return;
  if (entry.kind === "link") symlinkSync(entry.target, file);
  else writeFileSync(file, entry.data, { flag: "wx", mode: entry.mode });
}

/**
 * The rules files as they are before a command runs. `undo()` after it puts back any it created,
 * changed or deleted — also ways no text check sees (`cp template/* .`, an archive, a script) —
 * and says which. A process the command leaves running in the background is not watched.
 */
export function snapshotRules(workspace: string): { undo(): string | undefined } {
  const files = RULES_FILES.map((f) => path.join(workspace, f));
  const before = files.map(entryOf);
  return {
    undo() {
      const changed: string[] = [];
      files.forEach((file, i) => {
        if (sameEntry(before[i]!, entryOf(file))) return;
        changed.push(RULES_FILES[i]!);
        try {
          restore(file, before[i]!, workspace);
        } catch {
          // Reported below all the same: the user should look at it.
        }
      });
      if (changed.length === 0) return undefined;
      return `Note: this command changed the project's command rules (${changed.join(", ")}); commands may not do that, so the change was undone. Ask the user to edit the rules file if a rule should change.`;
    },
  };
}
