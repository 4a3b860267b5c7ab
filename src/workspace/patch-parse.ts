/**
 * Parser for the patch format OpenAI's models are trained to write (Codex's apply_patch, the
 * cookbook's "V4A"): no line numbers, each change located by context lines and optional "@@"
 * lines naming an enclosing class or function.
 *
 *   *** Begin Patch
 *   *** Add File: path            then every line "+text"
 *   *** Delete File: path
 *   *** Update File: path
 *   *** Move to: new/path         optional, right after Update File
 *   @@ class Foo                  optional anchors, then " context", "-removed", "+added" lines
 *   *** End of File               optional: the hunk ends at the end of the file
 *   *** End Patch
 *
 * Lenient where models slip without changing meaning (as Codex's and opencode's parsers are): a
 * shell heredoc (`apply_patch <<'EOF'`, `cat <<'EOF'`, a bare `<<EOF`) or Markdown fence around
 * the patch, "\r\n" or lone "\r" line ends, markers padded with whitespace (an indented
 * "*** Update File:" included), blank lines between hunks and after "*** End of File", a blank line
 * inside a hunk (an empty context line), unified-diff hunk headers ("@@ -12,7 +12,8 @@", which
 * carry no anchor), a first hunk without "@@", a hunk of context only (it must still match; it lets
 * a rename check where it is).
 */

export interface PatchLine {
  kind: " " | "-" | "+";
  text: string;
}

export interface Hunk {
  /** "@@ text" lines before the hunk: each is searched for in turn, and the hunk follows the last. */
  anchors: string[];
  lines: PatchLine[];
  /** The hunk's old lines end the file ("*** End of File"). */
  endOfFile: boolean;
  /** 1-based line of the patch where the hunk starts, for messages. */
  patchLine: number;
}

export type PatchOp =
  | { kind: "add"; path: string; lines: string[]; patchLine: number }
  | { kind: "delete"; path: string; patchLine: number }
  | { kind: "update"; path: string; moveTo?: string; hunks: Hunk[]; patchLine: number };

/** A patch that cannot be read; the message names the line and says what was expected. */
export class PatchParseError extends Error {
  override name = "PatchParseError";
}

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File: ";
const DELETE = "*** Delete File: ";
const UPDATE = "*** Update File: ";
const MOVE = "*** Move to: ";
const END_OF_FILE = "*** End of File";
/** A unified-diff hunk header: numbers, no anchor. */
const UNIFIED_HEADER = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;

/**
 * The first line of a heredoc around the patch: `apply_patch <<'EOF'`, `applypatch <<EOF`,
 * `cat <<"EOF"`, `cat <<'EOF' | apply_patch`, a bare `<<EOF`; group 2 is the delimiter.
 */
const HEREDOC_START =
  /^(?:(?:apply_patch|applypatch|cat)\s*)?<<-?\s*(['"]?)([\w.-]+)\1(?:\s*\|\s*(?:apply_patch|applypatch))?$/;

/** The patch's lines without a heredoc or Markdown fence around them. */
function unwrap(text: string): { lines: string[]; offset: number } {
  let lines = text.split(/\r\n|\r|\n/);
  let offset = 0;
  const trimEdges = () => {
    while (lines.length > 0 && lines[0]!.trim() === "") {
      lines = lines.slice(1);
      offset++;
    }
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines = lines.slice(0, -1);
  };
  trimEdges();
  const first = lines[0]?.trim() ?? "";
  const closing = HEREDOC_START.exec(first)?.[2] ?? (/^```[\w-]*$/.test(first) ? "```" : undefined);
  if (closing !== undefined && lines[lines.length - 1]!.trim() === closing) {
    lines = lines.slice(1, -1);
    offset++;
  }
  trimEdges();
  return { lines, offset };
}

const startsOp = (line: string) => line.startsWith(ADD) || line.startsWith(DELETE) || line.startsWith(UPDATE);

/**
 * Whether a line starts the next operation. Outside a hunk any padding is allowed. Inside one, a
 * line that starts with whitespace is a context line (" *** Update File: x" may be a line of a
 * file that documents patches), unless the operations' own headers carry that same indentation.
 */
function isFileHeader(line: string, headerIndent = ""): boolean {
  if (line.trim() === END) return true;
  if (startsOp(line)) return true;
  return headerIndent !== "" && line.startsWith(headerIndent) && startsOp(line.slice(headerIndent.length));
}

/** Parses a patch into file operations, or throws PatchParseError. */
export function parsePatch(text: string): PatchOp[] {
  const { lines, offset } = unwrap(text);
  const at = (i: number) => `line ${i + 1 + offset}`;
  if (lines[0]?.trim() !== BEGIN) throw new PatchParseError(`The patch must start with "${BEGIN}".`);
  if (lines[lines.length - 1]?.trim() !== END) throw new PatchParseError(`The patch must end with "${END}".`);
  const ops: PatchOp[] = [];
  let i = 1;
  const last = lines.length - 1;
  const pathOf = (line: string, prefix: string, index: number) => {
    const p = line.slice(prefix.length).trim();
    if (p === "") throw new PatchParseError(`${at(index)}: "${prefix.trim()}" needs a path.`);
    return p;
  };
  /** The indentation of the last operation header, when the model indented it. */
  let headerIndent = "";
  const atHeader = (index: number) => isFileHeader(lines[index]!, headerIndent);
  while (i < last) {
    const raw = lines[i]!;
    const line = raw.trim();
    if (startsOp(line)) headerIndent = /^\s*/.exec(raw)![0];
    if (line.startsWith(ADD)) {
      const start = i;
      const path = pathOf(line, ADD, i++);
      const added: string[] = [];
      let blanks = 0; // bare blank lines at the end are separators, not content
      while (i < last && !isFileHeader(lines[i]!.trim())) {
        const l = lines[i]!;
        if (l.startsWith("+")) {
          added.push(l.slice(1));
          blanks = 0;
        } else if (l.trim() === "") {
          added.push("");
          blanks++;
        } else
          throw new PatchParseError(`${at(i)}: every line of an added file starts with "+" (got "${l.slice(0, 60)}").`);
        i++;
      }
      added.splice(added.length - blanks, blanks);
      ops.push({ kind: "add", path, lines: added, patchLine: start + 1 + offset });
    } else if (line.startsWith(DELETE)) {
      ops.push({ kind: "delete", path: pathOf(line, DELETE, i), patchLine: i + 1 + offset });
      i++;
    } else if (line.startsWith(UPDATE)) {
      const start = i;
      const path = pathOf(line, UPDATE, i++);
      let moveTo: string | undefined;
      if (i < last && lines[i]!.trim().startsWith(MOVE)) moveTo = pathOf(lines[i]!.trim(), MOVE, i++);
      const hunks: Hunk[] = [];
      while (i < last && !atHeader(i)) {
        // Blank lines between hunks (after "*** End of File" too) separate them.
        if (lines[i]!.trim() === "") {
          i++;
          continue;
        }
        const hunk: Hunk = { anchors: [], lines: [], endOfFile: false, patchLine: i + 1 + offset };
        while (i < last && (lines[i] === "@@" || lines[i]!.startsWith("@@ "))) {
          const anchor = lines[i]!.slice(2)
            .trim()
            .replace(/\s*@@$/, "");
          if (anchor !== "" && !UNIFIED_HEADER.test(lines[i]!.slice(3))) hunk.anchors.push(anchor);
          i++;
        }
        while (i < last && !atHeader(i) && lines[i] !== "@@" && !lines[i]!.startsWith("@@ ")) {
          const l = lines[i]!;
          if (l.trim() === END_OF_FILE) {
            hunk.endOfFile = true;
            i++;
            break;
          }
          const kind = l[0];
          if (kind === " " || kind === "-" || kind === "+") hunk.lines.push({ kind, text: l.slice(1) });
          else if (l === "") hunk.lines.push({ kind: " ", text: "" });
          else {
            throw new PatchParseError(
              `${at(i)}: a hunk line starts with " " (context), "-" (remove) or "+" (add); got "${l.slice(0, 60)}". Start each change with "@@".`,
            );
          }
          i++;
        }
        if (hunk.lines.length === 0) {
          throw new PatchParseError(`line ${hunk.patchLine}: the hunk in "${path}" has no lines.`);
        }
        hunks.push(hunk);
      }
      if (hunks.length === 0 && moveTo === undefined) {
        throw new PatchParseError(`${at(start)}: "*** Update File: ${path}" has no hunks.`);
      }
      ops.push({ kind: "update", path, moveTo, hunks, patchLine: start + 1 + offset });
    } else if (line === "") {
      i++;
    } else {
      throw new PatchParseError(
        `${at(i)}: expected "${ADD.trim()}", "${DELETE.trim()}", "${UPDATE.trim()}" or "${END}"; got "${line.slice(0, 60)}".`,
      );
    }
  }
  if (ops.length === 0) throw new PatchParseError("The patch has no file operations.");
  return ops;
}

/** Every path a patch names (sources and move targets), for approval rules; [] when it cannot be read. */
export function patchPaths(text: string): string[] {
  try {
    return parsePatch(text).flatMap((op) => (op.kind === "update" && op.moveTo ? [op.path, op.moveTo] : [op.path]));
  } catch {
    return [];
  }
}
