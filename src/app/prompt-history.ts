import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { stateHome } from "../memory/state-dir.js";
import { gateText } from "../workspace/output-gate.js";

/**
 * The session prompt's history kept between sessions (issue 44 item 6), as Claude Code, Codex and
 * Gemini CLI keep theirs: Up at a new session's prompt brings back what was typed in earlier
 * ones. One file for the person, in their state folder (mode 700), itself mode 600, JSON Lines
 * oldest first, at most MAX_HISTORY_ENTRIES lines of at most MAX_HISTORY_ENTRY_CHARS; known
 * secrets and credential shapes are masked before it is written, as in everything mini-cursor
 * saves.
 */

export const PROMPT_HISTORY_FILE = "prompt-history.jsonl";
/** Lines kept, as the prompt keeps them (ui/repl.ts HISTORY_SIZE). */
export const MAX_HISTORY_ENTRIES = 500;
/** A longer line (a pasted log) is not kept: history is for what is typed again. */
export const MAX_HISTORY_ENTRY_CHARS = 4_000;
/** A line that holds a paste's placeholder means nothing in another session. */
const PASTE_PLACEHOLDER = /\[pasted text #\d+/;

export interface PromptHistory {
  /** Newest first, as readline keeps its history. */
  load(): string[];
  /**
   * Adds a line that was entered (an earlier copy of it moves to the end), to what the file holds
   * now: two sessions open at once both keep their lines.
   */
  add(line: string): void;
}

export function promptHistoryFile(): string {
  return path.join(stateHome(), PROMPT_HISTORY_FILE);
}

function keepable(line: string): boolean {
  return line.trim() !== "" && line.length <= MAX_HISTORY_ENTRY_CHARS && !PASTE_PLACEHOLDER.test(line);
}

/** The history in `file`; a missing or unreadable file is an empty history (never an error at the prompt). */
export function filePromptHistory(file: string = promptHistoryFile()): PromptHistory {
  const history: PromptHistory = {
    load() {
      let text: string;
      try {
        // In a shared state home (root's /tmp, say), a file someone else planted is not our history.
        const st = lstatSync(file);
        if (!st.isFile() || (process.getuid !== undefined && st.uid !== process.getuid())) return [];
        text = readFileSync(file, "utf8");
      } catch {
        return [];
      }
      const lines: string[] = [];
      for (const row of text.split("\n")) {
        try {
          const value = JSON.parse(row) as unknown;
          if (typeof value === "string" && keepable(value)) lines.push(value);
        } catch {
          // A torn or foreign line is skipped.
        }
      }
      return lines.slice(-MAX_HISTORY_ENTRIES).reverse();
    },
    add(line) {
      if (!keepable(line)) return;
      const shown = gateText(line);
      const oldestFirst = [
        ...history
          .load()
          .reverse()
          .filter((l) => l !== shown),
        shown,
      ].slice(-MAX_HISTORY_ENTRIES);
      const body = oldestFirst.map((l) => `${JSON.stringify(l)}\n`).join("");
      // Whole or not at all, and private from its first byte: a new file of mode 600 renamed over the old.
      const temp = `${file}.${process.pid}.tmp`;
      try {
        mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
        rmSync(temp, { force: true });
        writeFileSync(temp, body, { mode: 0o600, flag: "wx" });
        renameSync(temp, file);
      } catch {
        // History is a convenience: a full disk or a read-only state folder must not stop the session.
        rmSync(temp, { force: true });
      }
    },
  };
  return history;
}
