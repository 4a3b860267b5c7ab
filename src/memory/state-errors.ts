import { accessSync, constants } from "node:fs";
import path from "node:path";
import { redactCredentials } from "../credential-shapes.js";
import { shellQuote } from "../shell-quote.js";
import { StateFileError } from "./state-file-error.js";
import { DamagedMessageError } from "./stored-message-codec.js";
import { ENDS_RUN } from "../contracts/tools.js";

/**
 * What went wrong with the saved state, named as what it is, with the file or database (its
 * password masked) and what to do: a full disk, a read-only or forbidden state folder, a
 * database that is down or restarted, a table that is gone, a format from a newer version.
 * Only SQLite's own "corrupt" and "not a database" mean a damaged file (StateFileError, the
 * one case where moving the file aside is offered).
 */

/** This version's state format; stored in the file (PRAGMA user_version) or the database. */
export const STATE_FORMAT_VERSION = 1;

/** A state problem, said in one sentence; the engines and the CLI print its message as it is. */
export class StateError extends Error {
  override name = "StateError";
  /** A tool call's guard lets it through: the run ends (contracts/tools.ts). */
  readonly [ENDS_RUN] = true;
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * A run aborted because its state failed under it (the thread's lock was lost, say) ended in
 * that error, not in an interruption: the signal's reason is the error to report.
 */
export function stateAbort(signal: AbortSignal | undefined): StateError | undefined {
  return signal?.aborted && signal.reason instanceof StateError ? signal.reason : undefined;
}

/**
 * How long connecting to PostgreSQL may take (TCP and the server's first answer) before it is
 * given up: a port that accepts connections but never answers must not hang a run.
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

/** Where the state lives: a file (SQLite, JSON) or a database URL. */
export interface StateLocation {
  file?: string;
  url?: string;
}

interface CodedError {
  code?: unknown;
  errno?: unknown;
  path?: unknown;
  message?: unknown;
  cause?: unknown;
}

function codeOf(err: unknown): string {
  let e = err as CodedError | undefined;
  for (let depth = 0; e && depth < 4; depth++) {
    if (typeof e.code === "string" && e.code) return e.code;
    e = e.cause as CodedError | undefined;
  }
  return "";
}

/** The database (its password masked), else the file the error names, else `where`'s file. */
export function stateLocationName(where: StateLocation, err?: unknown): string {
  if (where.url) return `the PostgreSQL database at ${redactCredentials(where.url)}`;
  const p = typeof (err as CodedError)?.path === "string" ? ((err as CodedError).path as string) : where.file;
  return p ?? "the state folder";
}

const KEPT = "The thread is kept up to its last saved step; the step in flight was not saved.";

export function stateFormatError(where: StateLocation, found: number): StateError {
  const what = stateLocationName(where);
  return new StateError(
    `${what} was written by a newer mini-cursor (state format ${found}; this version reads up to ${STATE_FORMAT_VERSION}). ` +
      "Nothing was changed in it. Update mini-cursor to use these threads, or point this version at other state (another --checkpointer, or another workspace).",
    "STATE_FORMAT_NEWER",
  );
}

export function missingTableError(where: StateLocation, table: string): StateError {
  const what = stateLocationName(where);
  const reset = where.url
    ? "to start over with no saved threads, drop the table mini_cursor_format as well and run again"
    : `to start over with no saved threads, move the file aside (mv ${shellQuote(where.file ?? "")} ${shellQuote(`${where.file ?? ""}.old`)})`;
  return new StateError(
    `The table ${table} is missing from ${what}, which mini-cursor made earlier: it was dropped or changed outside mini-cursor, so its saved threads cannot be read. ` +
      `Nothing was run. Restore it from a backup; ${reset}.`,
    "STATE_TABLE_MISSING",
  );
}

/**
 * A thread the index says ran steps, whose history the checkpointer does not hold: the file was
 * replaced, emptied or moved aside (as missingTableError's advice does). Continuing would start
 * a conversation the thread's id says it is not.
 */
export function lostHistoryError(
  where: StateLocation,
  thread: { id: string; steps: number; updatedAt: string },
  index: string,
): StateError {
  const what = stateLocationName(where);
  const when = /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(thread.updatedAt)
    ? `, last on ${thread.updatedAt.slice(0, 16).replace("T", " ")} UTC`
    : "";
  return new StateError(
    `Thread ${thread.id} ran ${thread.steps} step${thread.steps === 1 ? "" : "s"} (${index} says${when}), but ${what} holds none of its history: ` +
      "it was replaced, emptied or moved aside since. Nothing was run. Restore it from a backup to continue this thread, or leave out --thread/--continue to start a new one.",
    "STATE_HISTORY_LOST",
  );
}

/**
 * SQLite says only that it cannot open or write a file; the folder says why (a read-only
 * mount, or no permission), asked the way the operating system answers it.
 */
function whyNotWritable(file: string | undefined): string | undefined {
  if (!file) return undefined;
  for (const target of [path.dirname(file), file]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EROFS" || code === "EACCES" || code === "EPERM") return code;
    }
  }
  return undefined;
}

/** A stored message that cannot be read: which one, where, and what to do. */
function damagedMessageError(err: DamagedMessageError, where: StateLocation): StateError {
  const what = stateLocationName(where);
  const which = err.where.ref ? `Message ${err.where.ref}` : "A message";
  const of = err.where.threadId ? ` of thread ${err.where.threadId}` : "";
  return new StateError(
    `${which}${of} in ${what} cannot be read: ${err.why}. It was changed outside mini-cursor (or by the disk), so the thread cannot go on. ` +
      "Nothing was run. Restore it from a backup to continue this thread, or leave out --thread/--continue to start a new one.",
    "STATE_DAMAGED",
  );
}

/** The sentence for a state error, or undefined when `err` is not about the state. */
export function describeStateProblem(err: unknown, where: StateLocation): Error | undefined {
  if (err instanceof StateError || err instanceof StateFileError) return err;
  if (err instanceof DamagedMessageError) return damagedMessageError(err, where);
  let code = codeOf(err);
  if (!where.url && (code === "SQLITE_CANTOPEN" || code.startsWith("SQLITE_READONLY")))
    code = whyNotWritable(where.file) ?? code;
  const message = String((err as CodedError)?.message ?? err);
  const at = stateLocationName(where, err);
  if (code === "ENOSPC" || code === "SQLITE_FULL" || code === "53100" || /database or disk is full/i.test(message)) {
    // The folder to look at is the file's own; never `df -h .`, the folder mini-cursor runs in.
    const room = where.url
      ? " on the database server"
      : path.isAbsolute(at)
        ? ` where ${path.dirname(at)} lives (df -h ${shellQuote(path.dirname(at))})`
        : " on the disk that holds mini-cursor's state folder";
    return new StateError(
      `The disk is full: mini-cursor cannot save to ${at} (${code || "ENOSPC"}). ${KEPT} Free some space${room} and run again to continue the thread.`,
      "ENOSPC",
    );
  }
  if (
    code === "EROFS" ||
    code.startsWith("SQLITE_READONLY") ||
    /readonly database|read-only file system/i.test(message)
  ) {
    return new StateError(
      `The state folder is read-only: mini-cursor cannot write ${at} (${code || "EROFS"}). Nothing in it is damaged. ` +
        "Make it writable (or mount it read-write), or run where the state folder can be written.",
      "EROFS",
    );
  }
  if (code === "EACCES" || code === "EPERM" || (code === "SQLITE_CANTOPEN" && !where.url)) {
    return new StateError(
      `mini-cursor may not write ${at} (${code}: permission denied). Nothing in it is damaged. ` +
        "Give your user write access to it (ls -l shows the owner), or run as the user who owns it.",
      code,
    );
  }
  if (where.url) {
    const url = redactCredentials(where.url);
    if (/^57P0[123]$/.test(code) || /terminating connection due to administrator command/i.test(message))
      return new StateError(
        `The PostgreSQL server at ${url} shut down or restarted during the run (${code || "57P01"}: ${message.split("\n")[0]}). ${KEPT} Run again once the server is back.`,
        code || "57P01",
      );
    if (/connection timeout|timeout expired|timeout exceeded when trying to connect/i.test(message))
      return new StateError(
        `The PostgreSQL database at ${url} did not answer within ${POSTGRES_CONNECT_TIMEOUT_MS / 1000} s of connecting. ` +
          "Check that the server is running and answering, and that MINI_CURSOR_CHECKPOINTER (or --checkpointer) names a PostgreSQL server (not another service on that port); unset it to keep threads in the workspace (SQLite).",
        "ETIMEDOUT",
      );
    if (
      /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/.test(code) ||
      /Connection terminated|connect ECONNREFUSED|server closed the connection/i.test(message)
    )
      return new StateError(
        `The PostgreSQL database at ${url} cannot be reached (${code || message.split("\n")[0]}). ` +
          "Check that the server is running and that MINI_CURSOR_CHECKPOINTER (or --checkpointer) names it; unset it to keep threads in the workspace (SQLite).",
        code || "ECONNREFUSED",
      );
    if (code === "42P01") {
      const table = /relation "([^"]+)" does not exist/.exec(message)?.[1] ?? "of mini-cursor";
      return missingTableError(where, table);
    }
  } else {
    const table = /no such table: (\S+)/.exec(message)?.[1];
    if (table) return missingTableError(where, table);
    if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB")
      return new StateFileError(where.file ?? at, message.split("\n")[0]!);
    if (/^SQLITE_IOERR/.test(code))
      return new StateError(
        `mini-cursor could not write ${at} (${code}: ${message.split("\n")[0]}): the disk reported an error. ${KEPT} Check the disk (dmesg, df -h) and run again.`,
        code,
      );
  }
  return undefined;
}

/** Rethrows a state error as its sentence; anything else unchanged. */
export function stateProblem(err: unknown, where: StateLocation): unknown {
  return describeStateProblem(err, where) ?? err;
}

/** Runs `fn`; a state error it throws comes out as its sentence. */
export async function guardState<T>(where: StateLocation, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw stateProblem(err, where);
  }
}
