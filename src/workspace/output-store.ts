import { randomBytes } from "node:crypto";
import { constants, createWriteStream, promises as fsPromises, readdirSync, rmSync, type WriteStream } from "node:fs";
import { ensureOutputDir, outputDirPath } from "../memory/state-dir.js";
import { canVerifyDescriptors, descriptorPath, type VerifiedFile } from "./verified-open.js";
import path from "node:path";
import { withThousands } from "../thousands.js";
import { gateText } from "./output-gate.js";
import { occurrences } from "./text-normalise.js";

/**
 * Command output for the model: kept whole while it is short, cut to head + tail when it is
 * long, with the full text streamed to a file in the workspace's state folder (`output/`, outside
 * the workspace) so the model can page through it with read_file, which reads that folder too. Memory stays bounded however much a command prints.
 */

/** Most characters of output the model sees from one command. */
export const MAX_OUTPUT_CHARS = 30_000;
/** Of those, how many come from the start (the command line, first errors)... */
export const HEAD_CHARS = 10_000;
/** ...and how many from the end (summaries, the final error); the rest is the notice line. */
export const TAIL_CHARS = 19_500;
/** Saved outputs kept; older ones are deleted so the folder cannot grow without end. */
export const MAX_SAVED_OUTPUTS = 50;
/** Largest output file; past this the rest is dropped (the model could not read more anyway). */
export const MAX_SAVED_CHARS = 1024 ** 3;
/** Buffered bytes in the file stream before the producer is asked to pause. */
const FILE_HIGH_WATER_MARK = 1024 * 1024;
/** An incomplete escape sequence longer than this is passed through rather than held back. */
const MAX_ANSI_CARRY = 256;
/** A saved line longer than this is gated in pieces rather than held back whole. */
const MAX_GATED_LINE = 64 * 1024;

// CSI (colours, cursor moves), OSC (titles, hyperlinks) and two-byte escapes.
const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]/g;
const PARTIAL_ANSI = /^\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?$/;

/** Removes terminal escape codes (Vite and most dev tools print colours). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, "");
}

/**
 * A stateful stripper for a stream: an escape sequence split across two chunks is held back
 * until its end arrives, so no half-codes leak into the output.
 */
export function createAnsiStripper(): (text: string, final?: boolean) => string {
  let carry = "";
  return (text, final = false) => {
    let input = carry + text;
    carry = "";
    const escape = input.lastIndexOf("\x1b");
    if (!final && escape !== -1 && input.length - escape <= MAX_ANSI_CARRY && PARTIAL_ANSI.test(input.slice(escape))) {
      carry = input.slice(escape);
      input = input.slice(0, escape);
    }
    return stripAnsi(input);
  };
}

/**
 * The saved file passes the output gate (output-gate.ts) like everything else mini-cursor
 * saves: secrets redacted, control characters made visible. A line at a time, so a secret's
 * shape or a CR LF split between two chunks is whole when it is checked.
 */
export function createLineGate(): (text: string, final?: boolean) => string {
  let carry = "";
  return (text, final = false) => {
    const input = carry + text;
    let cut = final ? input.length : input.lastIndexOf("\n") + 1;
    if (input.length - cut > MAX_GATED_LINE) cut = input.length;
    carry = input.slice(cut);
    return cut > 0 ? gateText(input.slice(0, cut)) : "";
  };
}

/** Keeps only the last `maxChars` characters of what is pushed into it. */
export interface TailRing {
  push(text: string): void;
  text(tailChars?: number): string;
}

export function createTailRing(maxChars: number): TailRing {
  let chunks: string[] = [];
  let size = 0;
  return {
    push(text) {
      if (text.length >= maxChars) {
        chunks = [text.slice(text.length - maxChars)];
        size = maxChars;
        return;
      }
      chunks.push(text);
      size += text.length;
      while (size - chunks[0]!.length >= maxChars) size -= chunks.shift()!.length;
      if (size > maxChars) {
        chunks[0] = chunks[0]!.slice(size - maxChars);
        size = maxChars;
      }
    },
    text(tailChars) {
      const all = chunks.join("");
      chunks = all ? [all] : [];
      return tailChars === undefined || tailChars >= all.length ? all : all.slice(all.length - tailChars);
    },
  };
}

/** What the model gets to see of one command's output. */
export interface CapturedOutput {
  /** The whole output, or head + a notice line + tail when it was longer than the cap. */
  text: string;
  totalChars: number;
  totalLines: number;
  truncated: boolean;
  /** Where the full output is, relative to the workspace root (only when truncated). */
  savedTo?: string;
  /** Why the full output could not be saved, when it could not. */
  saveError?: string;
}

/** Collects one command's output; `write` returns false when the producer should pause. */
export interface OutputCapture {
  write(text: string): boolean;
  /** Called once the file has caught up after `write` returned false. */
  onDrain(listener: () => void): void;
  /** The last characters written (for a process that lives on in the background). */
  tail(tailChars?: number): string;
  /** Ends the file (if any) and returns what the model should see. Call once. */
  finish(): Promise<CapturedOutput>;
}

function pruneOldOutputs(outputDir: string): void {
  const names = readdirSync(outputDir)
    .filter((n) => n.endsWith(".log"))
    .sort();
  for (const name of names.slice(0, Math.max(0, names.length - MAX_SAVED_OUTPUTS))) {
    rmSync(path.join(outputDir, name), { force: true });
  }
}

interface OutputFile {
  display: string;
  stream: WriteStream;
  error?: string;
  chars: number;
}

function openOutputFile(root: string): OutputFile {
  const outputDir = ensureOutputDir(root);
  pruneOldOutputs(outputDir);
  // Names sort by time, so pruning keeps the newest.
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const absolute = path.join(outputDir, `command-${stamp}-${randomBytes(3).toString("hex")}.log`);
  const stream = createWriteStream(absolute, { flags: "wx", highWaterMark: FILE_HIGH_WATER_MARK });
  const file: OutputFile = { display: absolute, stream, chars: 0 };
  stream.on("error", (err) => (file.error = err.message));
  return file;
}

/** Cuts the head back to a line end and the tail forward to a line start, when one is near. */
function trimToLines(head: string, tail: string): { head: string; tail: string } {
  const headEnd = head.lastIndexOf("\n");
  const tailStart = tail.indexOf("\n");
  return {
    head: headEnd >= head.length / 2 ? head.slice(0, headEnd + 1) : head,
    tail: tailStart !== -1 && tailStart < tail.length / 2 ? tail.slice(tailStart + 1) : tail,
  };
}

function truncationNotice(
  omittedChars: number,
  omittedLines: number,
  totalLines: number,
  file: OutputFile | undefined,
): string {
  const n = (x: number) => withThousands(x);
  const what = `[... ${n(omittedLines)} lines (${n(omittedChars)} characters) omitted.`;
  if (!file || file.error) {
    return `${what} The full output could not be saved${file?.error ? `: ${file.error}` : ""}.]`;
  }
  const partial = file.chars >= MAX_SAVED_CHARS ? ` (only its first ${n(MAX_SAVED_CHARS)} characters)` : "";
  return `${what} Full output (${n(totalLines)} lines) saved to ${file.display}${partial}; page through it with read_file.]`;
}

/** The truncation notice's end, as truncationNotice writes it: where the full output is. */
const SAVED_TO =
  / Full output \([\d,]+ lines\) saved to (.+?)(?: \(only its first ([\d,]+) characters\))?; page through it with read_file\.\]$/m;

/**
 * Where a command's result (formatCommandResult's text) says its output is saved, and how much
 * of it when not all (MAX_SAVED_CHARS), read back from the notice truncationNotice wrote in it
 * (the trace names it under a cut-off output).
 */
export function savedOutputOf(result: string): { path: string; firstChars?: string } | undefined {
  const m = SAVED_TO.exec(result);
  return m ? { path: m[1]!, ...(m[2] ? { firstChars: m[2] } : {}) } : undefined;
}

export function createOutputCapture(workspaceRoot: string): OutputCapture {
  let whole: string[] | undefined = []; // everything, until the cap is passed
  let head = "";
  const tail = createTailRing(TAIL_CHARS);
  let totalChars = 0;
  let newlines = 0;
  let endsWithNewline = true;
  let file: OutputFile | undefined;
  let saveError: string | undefined;
  const drainListeners: Array<() => void> = [];
  const gate = createLineGate();

  function toFile(raw: string, final = false): boolean {
    if (!file || file.error || file.chars >= MAX_SAVED_CHARS) return true;
    const text = gate(raw, final);
    const room = MAX_SAVED_CHARS - file.chars;
    const piece = text.length > room ? text.slice(0, room) : text;
    file.chars += piece.length;
    return file.stream.write(piece);
  }

  function startFile(): boolean {
    const pending = whole!.join("");
    whole = undefined;
    try {
      file = openOutputFile(workspaceRoot);
      file.stream.on("drain", () => drainListeners.forEach((l) => l()));
    } catch (err) {
      saveError = (err as Error).message;
      return true;
    }
    return toFile(pending);
  }

  return {
    write(text) {
      if (!text) return true;
      totalChars += text.length;
      newlines += occurrences(text);
      endsWithNewline = text.endsWith("\n");
      if (head.length < HEAD_CHARS) head += text.slice(0, HEAD_CHARS - head.length);
      tail.push(text);
      if (whole) {
        whole.push(text);
        return totalChars > MAX_OUTPUT_CHARS ? startFile() : true;
      }
      return toFile(text);
    },
    onDrain(listener) {
      drainListeners.push(listener);
    },
    tail: (tailChars) => tail.text(tailChars),
    async finish() {
      const totalLines = newlines + (endsWithNewline ? 0 : 1);
      if (whole) return { text: whole.join(""), totalChars, totalLines, truncated: false };
      if (file) {
        toFile("", true);
        const stream = file.stream;
        await new Promise<void>((resolve) => {
          if (stream.closed || stream.destroyed) return resolve();
          stream.once("close", () => resolve());
          stream.end();
        });
      }
      const cut = trimToLines(head, tail.text());
      const shownLines = occurrences(cut.head) + occurrences(cut.tail) + (cut.tail.endsWith("\n") ? 0 : 1);
      const omittedChars = totalChars - cut.head.length - cut.tail.length;
      const notice = truncationNotice(omittedChars, Math.max(0, totalLines - shownLines), totalLines, file);
      const headPart = cut.head.endsWith("\n") ? cut.head : `${cut.head}\n`;
      return {
        text: `${headPart}${notice}\n${cut.tail}`,
        totalChars,
        totalLines,
        truncated: true,
        savedTo: file && !file.error ? file.display : undefined,
        saveError: file?.error ?? saveError,
      };
    },
  };
}

/** Names mini-cursor gives saved output (command-….log, result-….txt). */
const SAVED_NAME = /^(?:command|result)-[A-Za-z0-9_.-]+\.(?:log|txt)$/;

/**
 * read_file's way into the state folder: a path naming a file mini-cursor saved in this
 * workspace's `output/` (as the truncation notice gives it) is opened read-only, without
 * following a symlink, and must be a plain file with one link. Anything else is undefined and
 * goes through the workspace's confinement as usual.
 */
export async function openSavedOutput(workspace: string, userPath: string): Promise<VerifiedFile | undefined> {
  if (!path.isAbsolute(userPath)) return undefined;
  const absolute = path.normalize(userPath);
  const dir = outputDirPath(workspace);
  if (path.dirname(absolute) !== dir || !SAVED_NAME.test(path.basename(absolute))) return undefined;
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const handle = await fsPromises.open(absolute, flags).catch(() => undefined);
  if (!handle) return undefined;
  const stat = await handle.stat();
  if (!stat.isFile() || stat.nlink !== 1) {
    await handle.close();
    return undefined;
  }
  return { handle, stat, path: canVerifyDescriptors() ? descriptorPath(handle.fd) : absolute };
}
