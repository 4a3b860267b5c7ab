import { randomBytes } from "node:crypto";
import { existsSync, renameSync } from "node:fs";
import { MAX_STATE_FILE_BYTES, readRegularTextSync } from "../regular-file.js";
import path from "node:path";
import { rebuildThreadIndex } from "./rebuild-threads.js";
import { stateDirFor, writeFileReplacing } from "./state-dir.js";
import { MAX_TITLE_CHARS } from "./state-layout.js";

/**
 * A small index of saved threads (id, first request, last update, steps), kept beside the
 * checkpoints so `--continue`, `/threads` and both engines can list them without reading
 * checkpoint internals.
 */

export const THREADS_FILE = "threads.json";

export interface ThreadInfo {
  id: string;
  engine: string;
  firstRequest: string;
  createdAt: string;
  updatedAt: string;
  steps: number;
  runs: number;
}

function file(workspace: string): string {
  return path.join(stateDirFor(workspace), THREADS_FILE);
}

function readIndex(workspace: string): ThreadInfo[] {
  const target = file(workspace);
  if (!existsSync(target)) return [];
  try {
    // Not waited on: anything but a regular file is damaged and rebuilt below.
    const data = JSON.parse(readRegularTextSync(target, { maxBytes: MAX_STATE_FILE_BYTES })) as unknown;
    if (!Array.isArray(data)) throw new Error("not a list");
    return data as ThreadInfo[];
  } catch {
    // A damaged index must not lose the threads: rebuild it from the threads themselves, and
    // keep the damaged file beside it for whoever wants to look.
    const rebuilt = rebuildThreadIndex(path.dirname(target));
    renameSync(target, `${target}.damaged`);
    writeFileReplacing(target, JSON.stringify(rebuilt, null, 2));
    return rebuilt;
  }
}

export function listThreads(workspace: string): ThreadInfo[] {
  return [...readIndex(workspace)].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** A short, readable, unique id. */
export function newThreadId(): string {
  const stamp = new Date().toISOString().slice(0, 10).replace(/-/g, "");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

function newEntry(id: string, engine: string, request: string, now: string): ThreadInfo {
  return {
    id,
    engine,
    firstRequest: request.slice(0, MAX_TITLE_CHARS),
    createdAt: now,
    updatedAt: now,
    steps: 0,
    runs: 0,
  };
}

/** Adds a thread to the index (no run counted) unless it is there. Written atomically. */
export function registerThread(workspace: string, id: string, engine: string, request: string): void {
  const threads = listThreads(workspace);
  if (threads.some((t) => t.id === id)) return;
  threads.push(newEntry(id, engine, request, new Date().toISOString()));
  writeFileReplacing(file(workspace), JSON.stringify(threads, null, 2));
}

/** Records a run on a thread (creating the entry on its first run). Written atomically. */
export function recordRun(workspace: string, id: string, engine: string, request: string, steps: number): ThreadInfo {
  const threads = listThreads(workspace);
  const now = new Date().toISOString();
  let info = threads.find((t) => t.id === id);
  if (!info) {
    info = newEntry(id, engine, request, now);
    threads.push(info);
  }
  info.updatedAt = now;
  info.steps += steps;
  info.runs += 1;
  writeFileReplacing(file(workspace), JSON.stringify(threads, null, 2));
  return info;
}
