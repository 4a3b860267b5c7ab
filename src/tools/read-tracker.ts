import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import { readRegularFile } from "../regular-file.js";

/**
 * Which files the model has seen in each thread, and what they held then. edit_file only
 * changes a file the model read (or wrote) in this thread and that nobody changed since, so
 * it never edits from memory of a file that a command, a formatter or the user rewrote.
 */

/** Files up to this size are fingerprinted by content; larger ones by size and mtime only. */
export const MAX_HASHED_BYTES = 16 * 1024 * 1024;

export interface FileFingerprint {
  size: number;
  mtimeMs: number;
  /** sha256 of the content, when the file was small enough to hash. */
  hash?: string;
}

export type ReadCheck = "ok" | "unread" | "changed";

export interface ReadTracker {
  /** Remembers the file as the model now knows it. */
  record(threadId: string | undefined, absPath: string, fingerprint: FileFingerprint): void;
  /** Whether the model read the file in this thread and it is unchanged since. */
  check(threadId: string | undefined, absPath: string, current: FileFingerprint): ReadCheck;
  /** Forgets every file of a thread (or all threads). */
  clear(threadId?: string): void;
}

/** The fingerprint of content already in memory (after a write or an edit). */
export function fingerprintOf(data: Uint8Array | string, stat: { size: number; mtimeMs: number }): FileFingerprint {
  return { size: stat.size, mtimeMs: stat.mtimeMs, hash: createHash("sha256").update(data).digest("hex") };
}

/** Reads the file to fingerprint it; big files get size and mtime only. */
export async function fingerprintFile(absPath: string): Promise<FileFingerprint> {
  const stat = await fs.stat(absPath);
  if (stat.size > MAX_HASHED_BYTES) return { size: stat.size, mtimeMs: stat.mtimeMs };
  // Read without blocking and checked again: a FIFO put in its place since the stat is not waited on.
  return fingerprintOf(await readRegularFile(absPath, { follow: true, maxBytes: MAX_HASHED_BYTES }), stat);
}

function same(a: FileFingerprint, b: FileFingerprint): boolean {
  if (a.hash !== undefined && b.hash !== undefined) return a.hash === b.hash;
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}

const key = (threadId: string | undefined, absPath: string) => `${threadId ?? ""}\u0000${absPath}`;

export function createReadTracker(): ReadTracker {
  const seen = new Map<string, FileFingerprint>();
  return {
    record(threadId, absPath, fingerprint) {
      seen.set(key(threadId, absPath), fingerprint);
    },
    check(threadId, absPath, current) {
      const known = seen.get(key(threadId, absPath));
      if (!known) return "unread";
      return same(known, current) ? "ok" : "changed";
    },
    clear(threadId) {
      if (threadId === undefined) return seen.clear();
      // The thread's own conversation and its sub-agents' (conversationOf).
      for (const k of [...seen.keys()])
        if (k.startsWith(`${threadId}\u0000`) || k.startsWith(`${threadId}\u0001`)) seen.delete(k);
    },
  };
}

/** The thread a tool call belongs to, from the run config both engines pass to tools. */
export function threadOf(config: { configurable?: Record<string, unknown> } | undefined): string | undefined {
  const id = config?.configurable?.thread_id;
  return typeof id === "string" ? id : undefined;
}

/**
 * The conversation a call belongs to: its thread, or a sub-agent's conversation in it (the
 * `task` call that started it, `configurable.conversation`). What the model has read is known
 * per conversation: a sub-agent never writes from a read another conversation made.
 */
export function conversationOf(config: { configurable?: Record<string, unknown> } | undefined): string | undefined {
  const thread = threadOf(config);
  const conversation = config?.configurable?.conversation;
  return typeof conversation === "string" && conversation ? `${thread ?? ""}\u0001${conversation}` : thread;
}
