import type { FileHandle } from "node:fs/promises";
import { applyHunksTo, dominantEol, type FileLine, finalEol, type HunkMatch, type PatchLines } from "./patch-apply.js";
import type { Hunk } from "./patch-parse.js";

/**
 * apply_patch's hunks on a file too big to hold in memory (issue 30), by the same rules as in
 * memory (patch-apply.ts): one pass counts the lines, their endings and keeps the byte offset of
 * every CHECKPOINT_LINES-th line; each search then streams from the nearest checkpoint, and a
 * hunk's replacement is kept as a splice of lines. The result is a list of byte splices for the
 * caller to write into a copy (tools/edit-big.ts), so memory is bounded by a chunk, the
 * checkpoints and the hunks' own lines, whatever the file's size.
 */

/** Bytes read per step. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Lines between two remembered offsets: a line is found by reading at most this many. */
const CHECKPOINT_LINES = 4096;

/** The sizes above; tests make them small to cross every boundary. */
export interface StreamTuning {
  chunkBytes: number;
  checkpointLines: number;
}
const DEFAULT_TUNING: StreamTuning = { chunkBytes: CHUNK_BYTES, checkpointLines: CHECKPOINT_LINES };
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Replace `length` bytes at `offset` with `bytes` (offsets of the original file, in order). */
export interface ByteSplice {
  offset: number;
  length: number;
  bytes: Buffer;
}

export type StreamedHunksResult =
  | {
      ok: true;
      splices: ByteSplice[];
      matches: HunkMatch[];
      changed: Array<{ first: number; removed: string[]; added: string[] }>;
    }
  | { ok: false; message: string };

/**
 * Visits the lines of the file from byte `from` (a line start), in order: `visit` gets the buffer,
 * the text's bounds in it, the line ending and the line's offset in the file; true stops.
 */
async function eachLine(
  tuning: StreamTuning,
  fh: FileHandle,
  from: number,
  size: number,
  visit: (buf: Buffer, start: number, end: number, eol: string, offset: number) => boolean | undefined,
): Promise<void> {
  let buf = Buffer.allocUnsafe(tuning.chunkBytes);
  let carried = 0;
  // File offset of buf[0].
  let base = from;
  let position = from;
  for (;;) {
    if (carried === buf.length) {
      // One line longer than the buffer: a bigger buffer, for this line's sake.
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, carried);
      buf = bigger;
    }
    const { bytesRead } = await fh.read(buf, carried, Math.min(buf.length - carried, size - position), position);
    position += bytesRead;
    const end = carried + bytesRead;
    const atEof = bytesRead === 0 || position >= size;
    // A view of what was read: searches never see stale bytes past it.
    const data = buf.subarray(0, end);
    let pos = 0;
    // The next "\r" at or after pos (-1: none in what was read), kept: a file of "\n" lines has none.
    let cr = data.indexOf(CARRIAGE_RETURN, 0);
    while (pos < end) {
      const nl = data.indexOf(NEWLINE, pos);
      if (cr !== -1 && cr < pos) cr = data.indexOf(CARRIAGE_RETURN, pos);
      let textEnd: number;
      let eol: string;
      if (cr !== -1 && (nl === -1 || cr < nl)) {
        if (cr + 1 >= end && !atEof) break; // "\r" at the end of what was read: "\r\n" or not?
        textEnd = cr;
        eol = cr + 1 < end && data[cr + 1] === NEWLINE ? "\r\n" : "\r";
      } else if (nl !== -1) {
        textEnd = nl;
        eol = "\n";
      } else {
        if (!atEof) break;
        textEnd = end;
        eol = "";
      }
      if (visit(data, pos, textEnd, eol, base + pos) === true) return;
      pos = textEnd + eol.length;
    }
    if (atEof) return;
    carried = end - pos;
    if (carried > 0 && pos > 0) buf.copy(buf, 0, pos, end);
    base += pos;
  }
}

interface FileScan {
  tuning: StreamTuning;
  size: number;
  lines: number;
  /** Offset of line k × CHECKPOINT_LINES. */
  checkpoints: number[];
  eols: Map<string, number>;
  endedWithNewline: boolean;
}

async function scanFile(fh: FileHandle, size: number, tuning: StreamTuning): Promise<FileScan> {
  const head = Buffer.alloc(3);
  await fh.read(head, 0, 3, 0);
  // Line 0 starts after a BOM, if any.
  const bodyStart = size >= 3 && head.equals(BOM) ? 3 : 0;
  const checkpoints: number[] = [];
  const eols = new Map<string, number>();
  let lines = 0;
  let lastEol = "";
  await eachLine(tuning, fh, bodyStart, size, (_buf, _start, _end, eol, offset) => {
    if (lines % tuning.checkpointLines === 0) checkpoints.push(offset);
    lines++;
    if (eol !== "") eols.set(eol, (eols.get(eol) ?? 0) + 1);
    lastEol = eol;
  });
  return { tuning, size, lines, checkpoints, eols, endedWithNewline: lines === 0 || lastEol !== "" };
}

/** A kept replacement: `deleteCount` original lines from `origStart` become `out`; `start` is its index now. */
interface LineSplice {
  start: number;
  origStart: number;
  deleteCount: number;
  out: FileLine[];
}

function streamedLines(
  fh: FileHandle,
  scan: FileScan,
): PatchLines & { splices: LineSplice[]; origLines: typeof origLines } {
  const splices: LineSplice[] = [];
  let delta = 0;
  const total = () => scan.lines + delta;
  /** Original lines from `orig` on; `visit` gets each decoded; true stops. */
  async function origLines(orig: number, visit: (line: FileLine, index: number) => boolean | undefined): Promise<void> {
    if (orig >= scan.lines) return;
    let index = orig;
    await eachLine(scan.tuning, fh, await offsetOf(fh, scan, orig), scan.size, (buf, start, end, eol) =>
      visit({ text: buf.toString("utf8", start, end), eol }, index++),
    );
  }
  /** The original index of line `i` now, or the replacement line it is. */
  function locate(i: number): { orig: number } | { splice: LineSplice; at: number } {
    let shift = 0;
    for (const sp of splices) {
      if (i < sp.start) break;
      if (i < sp.start + sp.out.length) return { splice: sp, at: i - sp.start };
      shift += sp.out.length - sp.deleteCount;
    }
    return { orig: i - shift };
  }
  const origOf = (i: number) => {
    const where = locate(i);
    if (!("orig" in where)) throw new Error("a search started inside an earlier hunk's lines");
    return where.orig;
  };
  return {
    splices,
    origLines,
    get length() {
      return total();
    },
    async line(i) {
      return i < 0 || i >= total() ? undefined : (await this.slice(i, 1))[0];
    },
    async slice(start, count) {
      const out: FileLine[] = [];
      if (count <= 0) return out;
      const first = locate(start);
      if (!("orig" in first)) {
        // Inside an earlier replacement: its lines, then whatever follows it, a line at a time.
        for (let i = start; i < start + count && i < total(); i++) {
          const where = locate(i);
          out.push("orig" in where ? (await this.slice(i, 1))[0]! : where.splice.out[where.at]!);
        }
        return out;
      }
      await origLines(first.orig, (line) => {
        out.push(line);
        return out.length >= count;
      });
      return out;
    },
    async scan(from, visit) {
      const origFrom = origOf(Math.min(from, total()));
      await origLines(origFrom, (line, index) => visit(line.text, index + from - origFrom));
    },
    splice(start, deleteCount, out) {
      const where = locate(start);
      if (!("orig" in where)) {
        // Inside an earlier replacement (a line end added to its last line): changed in place.
        where.splice.out.splice(where.at, deleteCount, ...out);
        delta += out.length - deleteCount;
        return;
      }
      splices.push({ start, origStart: where.orig, deleteCount, out });
      delta += out.length - deleteCount;
    },
    // Quoting the closest lines would mean reading the whole file again for a hint.
    closest: async () => undefined,
  };
}

const bytesOf = (lines: readonly FileLine[]) => Buffer.from(lines.map((l) => l.text + l.eol).join(""), "utf8");

/**
 * Applies `hunks` to the open file `fh` of `size` bytes. On success, the byte splices that turn
 * the file into the patched one, in order, and per hunk the lines it removed and added.
 */
export async function applyHunksStreamed(
  fh: FileHandle,
  size: number,
  hunks: readonly Hunk[],
  display: string,
  tuning: StreamTuning = DEFAULT_TUNING,
): Promise<StreamedHunksResult> {
  const scan = await scanFile(fh, size, tuning);
  const eol = dominantEol(scan.eols);
  const lines = streamedLines(fh, scan);
  const result = await applyHunksTo(lines, hunks, display, eol);
  if (!result.ok) return result;
  const splices: ByteSplice[] = [];
  const changed: Array<{ first: number; removed: string[]; added: string[] }> = [];
  for (const [n, sp] of lines.splices.entries()) {
    const last = n === lines.splices.length - 1;
    const reachesEnd = sp.origStart + sp.deleteCount >= scan.lines;
    const out = sp.out.map((l, j) => ({
      ...l,
      eol: finalEol(l, last && reachesEnd && j === sp.out.length - 1, scan.endedWithNewline, eol),
    }));
    let offset = await offsetOf(fh, scan, sp.origStart);
    const end = await offsetOf(fh, scan, sp.origStart + sp.deleteCount);
    // The file's last lines deleted, in a file without a final newline: the line before loses its ending.
    if (last && reachesEnd && out.length === 0 && !scan.endedWithNewline && sp.start > 0) {
      const before = await lines.line(sp.start - 1);
      offset -= Buffer.byteLength(before?.eol ?? "");
    }
    const removed: FileLine[] = [];
    if (sp.deleteCount > 0) await lines.origLines(sp.origStart, (l) => removed.push(l) >= sp.deleteCount);
    splices.push({ offset, length: end - offset, bytes: bytesOf(out) });
    changed.push({ first: sp.start + 1, removed: removed.map((l) => l.text), added: out.map((l) => l.text) });
  }
  return { ok: true, splices, matches: result.matches, changed };
}

/** Byte offset of original line `orig` (the file's size past the last line). */
async function offsetOf(fh: FileHandle, scan: FileScan, orig: number): Promise<number> {
  if (orig >= scan.lines) return scan.size;
  const k = Math.floor(orig / scan.tuning.checkpointLines);
  let line = k * scan.tuning.checkpointLines;
  let found = scan.checkpoints[k]!;
  if (line === orig) return found;
  await eachLine(scan.tuning, fh, found, scan.size, (_b, _s, _e, _eol, offset) => {
    found = offset;
    return line++ === orig;
  });
  return found;
}
