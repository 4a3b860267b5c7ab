import { isAscii } from "node:buffer";
import { randomBytes } from "node:crypto";
import { constants as fsConstants, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { NotRegularFileError } from "../regular-file.js";
import { withThousands } from "../thousands.js";
import { occurrences } from "./text-normalise.js";
import path from "node:path";

/**
 * File primitives for the tools: binary detection, reading a window of lines from a file of
 * any size with flat memory, counting lines by streaming, and atomic writes.
 */

/** Bytes sniffed for a NUL to call a file binary (what git and grep look at, roughly). */
export const BINARY_SNIFF_BYTES = 8 * 1024;
/** Chunk size for streaming reads: large enough for fast scans, small enough to stay flat. */
const CHUNK_BYTES = 1024 * 1024;
/** The first read of a window of lines (collectLines). */
const FIRST_WINDOW_READ_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
/** A UTF-8 code point takes at most this many bytes; bounds what we keep of a long line. */
const MAX_UTF8_BYTES_PER_CHAR = 4;

/** Width of a right-aligned line number, as `cat -n` prints it: read_file's lines and the edit tools' snippets. */
export const LINE_NUMBER_WIDTH = 6;

/** Binary file kinds by their human name, with the extensions that are binary whatever their first bytes say. */
const BINARY_KINDS: Readonly<Record<string, string>> = {
  "PNG image": "png",
  "JPEG image": "jpg jpeg",
  "GIF image": "gif",
  "BMP image": "bmp",
  icon: "ico",
  "WebP image": "webp",
  "AVIF image": "avif",
  "TIFF image": "tif tiff",
  "Photoshop image": "psd",
  "HEIC image": "heic",
  "PDF document": "pdf",
  "Word document": "doc docx",
  "Excel workbook": "xls xlsx",
  "PowerPoint deck": "ppt pptx",
  "OpenDocument file": "odt",
  "zip archive": "zip",
  "gzip archive": "gz tgz",
  "bzip2 archive": "bz2",
  "xz archive": "xz",
  "zstd archive": "zst",
  "7-Zip archive": "7z",
  "RAR archive": "rar",
  "tar archive": "tar",
  "Java archive": "jar war",
  "Android package": "apk",
  "Debian package": "deb",
  "RPM package": "rpm",
  "disk image": "dmg iso",
  "Windows executable": "exe",
  "Windows library": "dll",
  "shared library": "so dylib",
  "static library": "a lib",
  "object file": "o obj",
  "Java class file": "class",
  "Python bytecode": "pyc",
  "WebAssembly module": "wasm",
  "Node.js native addon": "node",
  "binary data": "bin dat",
  "web font": "woff woff2",
  font: "ttf otf eot",
  "MP3 audio": "mp3",
  "WAV audio": "wav",
  "FLAC audio": "flac",
  "Ogg audio": "ogg",
  "AAC audio": "m4a aac",
  "MP4 video": "mp4 m4v",
  "QuickTime video": "mov",
  "AVI video": "avi",
  "Matroska video": "mkv",
  "WebM video": "webm",
  "SQLite database": "sqlite sqlite3",
  "database file": "db",
};
const BINARY_EXTENSIONS: ReadonlyMap<string, string> = new Map(
  Object.entries(BINARY_KINDS).flatMap(([kind, extensions]) => extensions.split(" ").map((ext) => [ext, kind])),
);

/** Signatures for naming a file whose content (not extension) showed it is binary. */
const MAGIC_NUMBERS: ReadonlyArray<readonly [string, readonly number[]]> = [
  ["PNG image", [0x89, 0x50, 0x4e, 0x47]],
  ["JPEG image", [0xff, 0xd8, 0xff]],
  ["GIF image", [0x47, 0x49, 0x46, 0x38]],
  ["PDF document", [0x25, 0x50, 0x44, 0x46]],
  ["zip archive", [0x50, 0x4b, 0x03, 0x04]],
  ["gzip archive", [0x1f, 0x8b]],
  ["ELF executable", [0x7f, 0x45, 0x4c, 0x46]],
  ["WebAssembly module", [0x00, 0x61, 0x73, 0x6d]],
  ["SQLite database", [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65]],
  ["UTF-16 text", [0xff, 0xfe]],
  ["UTF-16 text", [0xfe, 0xff]],
];

/** The human name of a binary file type known by its extension, or undefined. */
export function binaryKindFromExtension(filePath: string): string | undefined {
  const ext = path.extname(filePath).slice(1).toLowerCase();
  return ext ? BINARY_EXTENSIONS.get(ext) : undefined;
}

/** Names the kind of binary content from its first bytes; undefined when it looks like text. */
export function binaryKindFromContent(head: Uint8Array): string | undefined {
  if (!head.includes(0)) return undefined;
  const match = MAGIC_NUMBERS.find(([, magic]) => magic.every((byte, i) => head[i] === byte));
  return match ? match[0] : "binary data";
}

/**
 * Opens a file the caller found (often its verified descriptor's /proc path, so a link is
 * followed) for reading without blocking, and checks on the descriptor that it is a regular
 * file: one swapped for a FIFO since is refused, never waited on. `use` reads it; it is closed after.
 */
async function withRegular<T>(absPath: string, use: (fh: FileHandle, st: Stats) => Promise<T>): Promise<T> {
  const fh = await fs.open(absPath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new NotRegularFileError(absPath, st.isFIFO() ? "a named pipe (FIFO)" : "not a file");
    return await use(fh, st);
  } finally {
    await fh.close();
  }
}

/**
 * Describes a binary file ("PNG image", "binary data") or returns undefined for text.
 * The extension decides first so a tiny PNG without a NUL in its header is still binary.
 */
export async function detectBinary(absPath: string): Promise<string | undefined> {
  const byExtension = binaryKindFromExtension(absPath);
  if (byExtension) return byExtension;
  return withRegular(absPath, async (fh) => {
    const buf = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return binaryKindFromContent(buf.subarray(0, bytesRead));
  });
}

/** "812 B", "1.2 KB", "3.4 MB": sizes for the model to reason about, not for accounting. */
export function formatSize(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let unit = 0;
  while (bytes >= 1024 ** (unit + 1) && unit < units.length - 1) unit++;
  const value = bytes / 1024 ** unit;
  if (unit === 0) return `${bytes} B`;
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/**
 * A size and the limit it passed, as formatSize gives them; in exact bytes when those read the
 * same ("1.0 GB, larger than … (1.0 GB)" says nothing).
 */
export function sizeOverLimit(size: number, limit: number): { size: string; limit: string } {
  const [a, b] = [formatSize(size), formatSize(limit)];
  return a === b
    ? { size: `${withThousands(size)} bytes`, limit: `${withThousands(limit)} bytes` }
    : { size: a, limit: b };
}

/** Lines in a text the way editors and `cat -n` see them: a final line needs no newline. */
export function countTextLines(text: string): number {
  if (text === "") return 0;
  return occurrences(text) + (text.endsWith("\n") ? 0 : 1);
}

interface NewlineScan {
  /** Newline bytes in the file. */
  newlines: number;
  /** Lines as `countTextLines` counts them. */
  lines: number;
  size: number;
}

/** Counts newlines in one pass over a reused buffer, so memory stays flat for any size. */
async function scanNewlines(fh: FileHandle): Promise<NewlineScan> {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  let newlines = 0;
  let lastByte = -1;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) newlines++;
    lastByte = chunk[bytesRead - 1]!;
    position += bytesRead;
  }
  const lines = position === 0 ? 0 : lastByte === NEWLINE ? newlines : newlines + 1;
  return { newlines, lines, size: position };
}

/** Number of lines in a file, by streaming it (a 1 GB file takes about half a second). */
export async function countLines(absPath: string): Promise<number> {
  return withRegular(absPath, async (fh) => (await scanNewlines(fh)).lines);
}

/**
 * Byte offset where 1-based `line` starts, found by reading forward from the start; undefined
 * when it lies past `withinBytes`.
 */
async function lineStartForward(fh: FileHandle, line: number, withinBytes = Infinity): Promise<number | undefined> {
  let toSkip = line - 1;
  if (toSkip === 0) return 0;
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  for (;;) {
    if (position >= withinBytes) return undefined;
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    if (bytesRead === 0) return position;
    const chunk = buf.subarray(0, bytesRead);
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) {
      if (--toSkip === 0) return position + i + 1;
    }
    position += bytesRead;
  }
}

/**
 * Byte offset where 1-based `line` starts, found by reading backwards in chunks from the end,
 * so a window at the end of a huge file costs only the bytes after it.
 */
async function lineStartBackward(fh: FileHandle, line: number, scan: NewlineScan): Promise<number> {
  if (line === 1) return 0;
  // The newline ending line `line - 1` is this many newlines from the end of the file.
  let toMeet = scan.newlines - (line - 1) + 1;
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let end = scan.size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK_BYTES);
    const { bytesRead } = await fh.read(buf, 0, end - start, start);
    const chunk = buf.subarray(0, bytesRead);
    for (let i = chunk.lastIndexOf(NEWLINE); i !== -1; i = i === 0 ? -1 : chunk.lastIndexOf(NEWLINE, i - 1)) {
      if (--toMeet === 0) return start + i + 1;
    }
    end = start;
  }
  return 0;
}

/** One line of a window, decoded for display. */
export interface WindowLine {
  /** The line without its line ending, cut to `maxLineChars` characters. */
  text: string;
  /** The full length of the line in characters (code points), before any cut. */
  chars: number;
  /** True when `text` is only the start of the line. */
  truncated: boolean;
}

export interface LineWindowRequest {
  /** 1-based first line. */
  startLine: number;
  /** Most lines to return. */
  maxLines: number;
  /** Longer lines are cut to this many characters. */
  maxLineChars: number;
  /** Stop collecting once the kept text passes this many bytes (the caller trims exactly). */
  maxBytes: number;
}

export interface LineWindow {
  lines: WindowLine[];
  /**
   * Lines in the whole file: counted for files up to COUNT_LINES_MAX_BYTES, known for bigger
   * ones when the window reached the end (or started past it), undefined otherwise.
   */
  totalLines: number | undefined;
  /** Size of the file in bytes when it was read. */
  size: number;
}

/** Accumulates the bytes of one line, keeping only as many as a cut line can show. */
function createLineBuilder(keepBytes: number) {
  const parts: Buffer[] = [];
  let kept = 0;
  let total = 0;
  // Bytes that start a code point: counts the characters of a giant line without decoding it.
  let charStarts = 0;
  let lastByte = -1;
  return {
    get empty() {
      return total === 0;
    },
    append(segment: Buffer): void {
      if (segment.length === 0) return;
      total += segment.length;
      // ASCII, the common case, is checked in native code: a byte-by-byte loop made the first
      // page of a 200 MB one-line file cost 0.5 s (issue 30's probe).
      if (isAscii(segment)) charStarts += segment.length;
      else for (let i = 0; i < segment.length; i++) if ((segment[i]! & 0xc0) !== 0x80) charStarts++;
      lastByte = segment[segment.length - 1]!;
      const room = keepBytes - kept;
      if (room <= 0) return;
      // Copy: the segment is a view of a read buffer that is about to be reused.
      const part = Buffer.from(segment.subarray(0, room));
      parts.push(part);
      kept += part.length;
    },
    finish(maxChars: number): WindowLine {
      const complete = kept === total;
      const hasCr = lastByte === CARRIAGE_RETURN;
      let text = Buffer.concat(parts).toString("utf8");
      if (complete && hasCr) text = text.slice(0, -1);
      // Exact for lines held whole; for giant lines, code-point starts are the honest estimate.
      const chars = complete ? codePointLength(text) : charStarts - (hasCr ? 1 : 0);
      if (chars <= maxChars) return { text, chars, truncated: false };
      return { text: cutToCodePoints(text, maxChars), chars, truncated: true };
    },
  };
}

/** Low surrogates belong to the previous code point. */
const codePointLength = (text: string) => text.length - (text.match(/[\udc00-\udfff]/g)?.length ?? 0);

/** The first `max` code points, never splitting a surrogate pair. */
const cutToCodePoints = (text: string, max: number) => Array.from(text).slice(0, max).join("");

/**
 * Reads up to `request.maxLines` lines from byte `offset`, streaming forward. Stops at byte
 * `end` (the size when lines were counted) so a growing log cannot disagree with its count.
 */
async function collectLines(
  fh: FileHandle,
  offset: number,
  end: number,
  request: LineWindowRequest,
): Promise<{ lines: WindowLine[]; consumed: number }> {
  const keepBytes = request.maxLineChars * MAX_UTF8_BYTES_PER_CHAR + MAX_UTF8_BYTES_PER_CHAR;
  const lines: WindowLine[] = [];
  let keptBytes = 0;
  let current = createLineBuilder(keepBytes);
  const done = () => lines.length >= request.maxLines || keptBytes > request.maxBytes;
  const finishLine = () => {
    const line = current.finish(request.maxLineChars);
    lines.push(line);
    keptBytes += Buffer.byteLength(line.text) + 1;
    current = createLineBuilder(keepBytes);
  };

  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = offset;
  // The byte after the last whole line collected.
  let consumed = offset;
  // A page is usually far smaller than a chunk: the first read is small and later ones double,
  // so a short page of a huge file costs what the same page of a small file does.
  let want = FIRST_WINDOW_READ_BYTES;
  while (!done()) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(want, buf.length, end - position), position);
    want *= 2;
    if (bytesRead === 0) {
      if (!current.empty) finishLine(); // last line without a final newline
      consumed = position;
      break;
    }
    const chunk = buf.subarray(0, bytesRead);
    let from = 0;
    while (!done()) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl === -1) {
        current.append(chunk.subarray(from));
        break;
      }
      current.append(chunk.subarray(from, nl));
      finishLine();
      from = nl + 1;
      consumed = position + from;
    }
    position += bytesRead;
  }
  return { lines, consumed };
}

/** Files up to this size have their lines counted for a window's total; in a bigger one a window within its first this many bytes costs only what lies before it. */
export const COUNT_LINES_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Reads a window of lines from a file of any size without loading it whole. Up to
 * COUNT_LINES_MAX_BYTES one streaming pass counts the lines, then the window is located from
 * whichever end is nearer; a bigger file is read forward to the window only.
 * A window past the end yields no lines; `totalLines` tells the caller why.
 */
export async function readLineWindow(absPath: string, request: LineWindowRequest): Promise<LineWindow> {
  return withRegular(absPath, async (fh, { size }) => {
    // A window near the start of a big file: only what lies before it is read, so the first
    // page of 200 MB costs what 2 KB's does. Deeper windows count the lines, then come from
    // whichever end is nearer.
    const early =
      size > COUNT_LINES_MAX_BYTES && request.maxLines > 0
        ? await lineStartForward(fh, request.startLine, COUNT_LINES_MAX_BYTES)
        : undefined;
    if (early !== undefined && early < size) {
      const { lines, consumed } = await collectLines(fh, early, size, request);
      return { lines, totalLines: consumed >= size ? request.startLine - 1 + lines.length : undefined, size };
    }
    const scan = await scanNewlines(fh);
    const result = { totalLines: scan.lines, size: scan.size };
    if (request.startLine > scan.lines || request.maxLines <= 0) return { lines: [], ...result };
    const nearStart = request.startLine - 1 <= scan.lines / 2;
    const offset = nearStart
      ? ((await lineStartForward(fh, request.startLine)) ?? 0)
      : await lineStartBackward(fh, request.startLine, scan);
    return { lines: (await collectLines(fh, offset, scan.size, request)).lines, ...result };
  });
}

export interface AtomicWriteResult {
  /** False when an existing file was replaced. */
  created: boolean;
  bytes: number;
}

export interface AtomicWriteOptions {
  /** Test seam: lets a test make the final step fail the way a crash or full disk would. */
  rename?: (from: string, to: string) => Promise<void>;
}

/** Persists the rename itself; not every platform or file system lets a directory be synced. */
async function syncDirectory(dir: string): Promise<void> {
  // Best effort: the data itself is already synced.
  const dh = await fs.open(dir, fsConstants.O_RDONLY).catch(() => undefined);
  await dh?.sync().catch(() => undefined);
  await dh?.close().catch(() => undefined);
}

/**
 * Writes `data` to `absPath` so readers see either the old file or the whole new one:
 * write a temp file in the same directory (same file system, so rename is atomic), fsync it,
 * then rename it over the target. The replaced file's mode is kept. The parent directory
 * must exist.
 */
export async function writeFileAtomic(
  absPath: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<AtomicWriteResult> {
  // lstat: a symlink put there meanwhile is replaced by the rename, never followed.
  const found = await fs.lstat(absPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  const existing = found?.isSymbolicLink() ? undefined : found;
  if (existing?.isDirectory()) {
    throw Object.assign(new Error(`${absPath} is a directory`), { code: "EISDIR", path: absPath });
  }
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  // Temp names are hidden and short, so even a 255-byte target name leaves room.
  const tmp = path.join(path.dirname(absPath), `.mini-cursor-${randomBytes(6).toString("hex")}.tmp`);
  const rename = options.rename ?? fs.rename;
  try {
    // "wx": never reuse a file someone else put there; 0o666 lets the umask decide, like any new file.
    const fh = await fs.open(tmp, "wx", 0o666);
    try {
      await fh.writeFile(bytes);
      // The replacement looks like the file it replaces: same permission bits and owner.
      if (existing) await fh.chmod(existing.mode & 0o7777);
      if (existing && typeof process.getuid === "function" && process.getuid() !== existing.uid) {
        // Only root can give a file away; for others the new file is theirs, as with any editor.
        await fh.chown(existing.uid, existing.gid).catch(() => undefined);
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, absPath);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  await syncDirectory(path.dirname(absPath));
  return { created: !existing, bytes: bytes.length };
}
