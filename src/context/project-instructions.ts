import { lstatSync, realpathSync } from "node:fs";
import { isRefusedFile, readRegularFileStartSync, reportSkippedFile } from "../regular-file.js";
import path from "node:path";

/**
 * Project instructions: AGENTS.md at the workspace root (or CLAUDE.md when there is no
 * AGENTS.md), added to the system prompt. The prompt is rebuilt for every model request, so
 * edits to the file apply at once and the text survives compaction of the conversation.
 */

/** Looked for in this order; the first that exists and is not empty wins. */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md"] as const;
/** More than this is cut (at a line end) with a note: instructions are not a place for data. */
export const MAX_INSTRUCTIONS_BYTES = 32 * 1024;

export interface ProjectInstructions {
  /** The file name, e.g. "AGENTS.md". */
  file: string;
  text: string;
  truncated: boolean;
  /** The size of the whole file. */
  bytes: number;
}

/** Path of the file when it is a regular file inside the workspace (a symlink may not lead out). */
function insideFile(workspace: string, name: string): string | undefined {
  const candidate = path.join(workspace, name);
  try {
    // Asked not to throw: the prompt is built for every request, and most workspaces have neither
    // file, so a thrown ENOENT (an error with its stack, twice a step) would be the usual answer.
    if (!lstatSync(candidate, { throwIfNoEntry: false })) return undefined;
    const root = realpathSync(workspace);
    const real = realpathSync(candidate);
    const rel = path.relative(root, real);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
    return real;
  } catch {
    return undefined;
  }
}

/** AGENTS.md (or CLAUDE.md) of the workspace, capped; undefined when there is none. */
export function loadProjectInstructions(workspace: string): ProjectInstructions | undefined {
  for (const name of INSTRUCTION_FILES) {
    const file = insideFile(workspace, name);
    if (!file) continue;
    let read: { data: Buffer; size: number };
    try {
      // The file's first MAX_INSTRUCTIONS_BYTES and its size; a FIFO or device is refused, never waited on, and said.
      read = readRegularFileStartSync(file, MAX_INSTRUCTIONS_BYTES);
    } catch (err) {
      if (isRefusedFile(err)) reportSkippedFile(file, err);
      continue;
    }
    const truncated = read.size > read.data.length;
    let text = read.data.toString("utf8").replace(/^\uFEFF/, "");
    if (truncated) {
      // Cut at the last line end so no half line (or half character) is left.
      const end = text.lastIndexOf("\n");
      text = end > 0 ? text.slice(0, end) : text.replace(/\uFFFD+$/, "");
    }
    text = text.trimEnd();
    if (text.trim() === "") continue;
    return { file: name, text, truncated, bytes: read.size };
  }
  return undefined;
}

/** The system prompt section with the instructions. */
export function instructionsSection(instructions: ProjectInstructions): string {
  const cut = instructions.truncated
    ? `\n[${instructions.file} is ${Math.round(instructions.bytes / 1024)} KB; only its first ${MAX_INSTRUCTIONS_BYTES / 1024} KB are included here. Read the file for the rest.]`
    : "";
  return `# Project instructions
The project's ${instructions.file} (at the workspace root) says the following. Follow it; when the user's request conflicts with it, the user wins.
<${instructions.file}>
${instructions.text}
</${instructions.file}>${cut}`;
}
