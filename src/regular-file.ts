import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";

/**
 * The one way mini-cursor reads a file for itself (AGENTS.md, rules and config files, agent and
 * command files, .gitignore, .env, the trust store, its state files): the file is opened
 * without blocking and checked, on the descriptor, to be a regular file no bigger than a bound,
 * before a byte is read. A FIFO put in its place (`mkfifo AGENTS.md` by a command) would make a
 * blocking open or read wait for a writer for good, hanging this run and every later start; a
 * device (`/dev/zero`) would never end. Both are refused instead, and so is a symlink at the
 * end of the path unless the caller allows one (`follow`: the person's own dotfiles), on the
 * same descriptor, so a swap after a check by name changes nothing.
 */

/** A settings file (a rules file, the user's config file, the trust store, a .env) bigger than this is not read. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** A state file (a thread, the thread index) may be big; no string V8 can hold is bigger than this. */
export const MAX_STATE_FILE_BYTES = 512 * 1024 * 1024;

/** The bound when the caller gives none: a file mini-cursor reads for itself is small. */
export const DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024;

export interface ReadRegularOptions {
  /** Follow a symlink at the end of the path (default: refuse it). */
  follow?: boolean;
  /** A bigger file is refused (FileTooLargeError); default DEFAULT_MAX_READ_BYTES. */
  maxBytes?: number;
}

/** The file is not a regular file (or is a symlink where none is followed): it was not read. */
export class NotRegularFileError extends Error {
  override name = "NotRegularFileError";
  constructor(
    readonly file: string,
    /** What it is instead, e.g. "a named pipe (FIFO)". */
    readonly kind: string,
  ) {
    super(`${file} is ${kind}, not a regular file`);
  }
}

/** The file is bigger than the caller's bound: it was not read. */
export class FileTooLargeError extends Error {
  override name = "FileTooLargeError";
  constructor(
    readonly file: string,
    readonly limit: number,
  ) {
    super(`${file} is larger than ${limit} bytes`);
  }
}

/** Either refusal, for callers that skip such a file and say why (`why` is the reason alone). */
export function isRefusedFile(err: unknown): err is NotRegularFileError | FileTooLargeError {
  return err instanceof NotRegularFileError || err instanceof FileTooLargeError;
}

/** Why a refused file was not read, in a few words ("it is a named pipe (FIFO), not a regular file"). */
export function refusalReason(err: NotRegularFileError | FileTooLargeError): string {
  return err instanceof NotRegularFileError
    ? `it is ${err.kind}, not a regular file`
    : `it is larger than ${err.limit} bytes`;
}

function kindOf(st: Stats): string {
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isDirectory()) return "a folder";
  return "not a file";
}

const flags = (follow: boolean) => constants.O_RDONLY | constants.O_NONBLOCK | (follow ? 0 : constants.O_NOFOLLOW);

/** The open's own refusals said as what the file is: a symlink under O_NOFOLLOW (ELOOP), a socket (ENXIO). */
function openRefusal(file: string, err: unknown, follow: boolean): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (!follow && code === "ELOOP") return new NotRegularFileError(file, "a symlink");
  if (code === "ENXIO") return new NotRegularFileError(file, "a socket");
  return err;
}

function openChecked(file: string, follow: boolean): { fd: number; st: Stats } {
  let fd: number;
  try {
    fd = openSync(file, flags(follow));
  } catch (err) {
    throw openRefusal(file, err, follow);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFileError(file, kindOf(st));
    return { fd, st };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Reads at most `limit` bytes from the start of an open file (it may have changed since its fstat). */
function readUpTo(fd: number, limit: number, sizeHint: number): Buffer {
  let buf = Buffer.allocUnsafe(Math.min(Math.max(sizeHint, 1), limit));
  let length = 0;
  for (;;) {
    if (length === buf.length) {
      if (length >= limit) break;
      const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, limit));
      buf.copy(grown, 0, 0, length);
      buf = grown;
    }
    const n = readSync(fd, buf, length, buf.length - length, length);
    if (n === 0) break;
    length += n;
  }
  return buf.subarray(0, length);
}

/** The whole file; throws NotRegularFileError, FileTooLargeError, or the open's own error (ENOENT…). */
export function readRegularFileSync(file: string, options: ReadRegularOptions = {}): Buffer {
  const limit = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  const { fd, st } = openChecked(file, options.follow ?? false);
  try {
    if (st.size > limit) throw new FileTooLargeError(file, limit);
    const data = readUpTo(fd, limit + 1, st.size);
    if (data.length > limit) throw new FileTooLargeError(file, limit);
    return data;
  } finally {
    closeSync(fd);
  }
}

/** The whole file as UTF-8 text (see readRegularFileSync). */
export function readRegularTextSync(file: string, options: ReadRegularOptions = {}): string {
  return readRegularFileSync(file, options).toString("utf8");
}

/** The file's first `bytes` bytes, and its whole size: for a file shown cut (AGENTS.md). */
export function readRegularFileStartSync(
  file: string,
  bytes: number,
  options: Pick<ReadRegularOptions, "follow"> = {},
): { data: Buffer; size: number } {
  const { fd, st } = openChecked(file, options.follow ?? false);
  try {
    return { data: readUpTo(fd, bytes, st.size), size: st.size };
  } finally {
    closeSync(fd);
  }
}

/** readRegularFileSync without blocking the event loop on the read itself. */
export async function readRegularFile(file: string, options: ReadRegularOptions = {}): Promise<Buffer> {
  const follow = options.follow ?? false;
  const limit = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  let handle;
  try {
    handle = await open(file, flags(follow));
  } catch (err) {
    throw openRefusal(file, err, follow);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new NotRegularFileError(file, kindOf(st));
    if (st.size > limit) throw new FileTooLargeError(file, limit);
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(64 * 1024), 0, 64 * 1024, length);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      length += bytesRead;
      if (length > limit) throw new FileTooLargeError(file, limit);
    }
    return Buffer.concat(chunks, length);
  } finally {
    await handle.close();
  }
}

/**
 * Files skipped for one of these reasons where the skip is not otherwise reported (an AGENTS.md
 * turned into a FIFO, a rules file that is a device): each is said once per process, to the
 * listener the front end sets (its notes), or kept until it sets one.
 */
const said = new Set<string>();
const waiting: string[] = [];
let listener: ((text: string) => void) | undefined;

/** Says that `file` was not read and why (once per file and reason). */
export function reportSkippedFile(file: string, err: NotRegularFileError | FileTooLargeError): void {
  const fix = err instanceof NotRegularFileError ? " Replace it with a regular file to use it." : "";
  const text = `${file} was not read: ${refusalReason(err)}.${fix}`;
  if (said.has(text)) return;
  said.add(text);
  if (listener) listener(text);
  else waiting.push(text);
}

/** Where skipped files are said from now on (the notices kept so far first); undefined: kept again. */
export function onSkippedFiles(next: ((text: string) => void) | undefined): void {
  listener = next;
  if (next) for (const text of waiting.splice(0)) next(text);
}
