import { existsSync, readdirSync, statSync } from "node:fs";
import { MAX_STATE_FILE_BYTES, readRegularTextSync } from "../regular-file.js";
import path from "node:path";
import { LOOP_THREADS_DIR, MAX_TITLE_CHARS, STATE_DB_FILE } from "./state-layout.js";
import { openSqliteFile, type SqliteDatabase } from "./sqlite-driver.js";
import { decodeRefs, inflateStoredMessage } from "./stored-message-codec.js";
import type { ThreadInfo } from "./threads.js";

/**
 * Rebuilds the thread index (threads.json) from what the threads themselves hold, for when the
 * index is damaged: the graph's checkpoints in state.sqlite and the loop's JSON files. Times
 * are the files' (checkpoints keep no wall-clock time we could read cheaply); steps count the
 * model's turns, runs the user's requests.
 */

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof (p as { text?: unknown })?.text === "string" ? (p as { text: string }).text : ""))
      .join("");
  return "";
}

/** An index entry from a thread's messages, `[type, content]` in order: steps count the model's turns, runs the user's requests. */
function entryOf(id: string, engine: string, messages: Iterable<[unknown, unknown]>, when: string): ThreadInfo {
  const info: ThreadInfo = { id, engine, firstRequest: "", createdAt: when, updatedAt: when, steps: 0, runs: 0 };
  let first: string | undefined;
  for (const [kind, content] of messages) {
    if (kind === "human") {
      info.runs++;
      first ??= contentText(content).slice(0, MAX_TITLE_CHARS);
    } else if (kind === "ai") info.steps++;
  }
  info.firstRequest = first ?? "";
  return info;
}

/**
 * The thread's messages as `[kind, content]`, in order, from its latest checkpoint: references
 * into `message_store` (compact-saver.ts), or, in files of earlier versions, hashes into `messages`.
 */
function threadMessages(db: SqliteDatabase, threadId: string): Array<[string, unknown]> {
  const row = db
    .prepare(
      "SELECT type, CAST(checkpoint AS TEXT) AS checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY rowid DESC LIMIT 1",
    )
    .get(threadId) as { type: string; checkpoint: string } | undefined;
  if (row?.type !== "json") return [];
  const stored = (
    JSON.parse(row.checkpoint) as {
      channel_values?: { messages?: { __messageIds?: string; __messageRefs?: string[] } };
    }
  ).channel_values?.messages;
  const out: Array<[string, unknown]> = [];
  if (typeof stored?.__messageIds === "string") {
    const select = db.prepare("SELECT value FROM message_store WHERE thread_id = ? AND ref = ?");
    for (const ref of decodeRefs(stored.__messageIds)) {
      const found = select.get(threadId, ref) as { value: Uint8Array } | undefined;
      if (!found) continue;
      try {
        const message = inflateStoredMessage(found.value);
        out.push([message.type, message.data.content]);
      } catch {
        // A message we cannot read does not count.
      }
    }
  } else if (Array.isArray(stored?.__messageRefs)) {
    const select = db.prepare("SELECT value FROM messages WHERE thread_id = ? AND hash = ?");
    for (const hash of stored.__messageRefs) {
      const found = select.get(threadId, hash) as { value: Uint8Array | string } | undefined;
      if (!found) continue;
      try {
        const data = JSON.parse(Buffer.from(found.value).toString("utf8")) as {
          id?: string[];
          kwargs?: { content?: unknown };
        };
        const name = data.id?.at(-1) ?? "";
        out.push([
          name.startsWith("HumanMessage") ? "human" : name.startsWith("AIMessage") ? "ai" : "other",
          data.kwargs?.content,
        ]);
      } catch {
        // As above.
      }
    }
  }
  return out;
}

function graphThreads(stateDir: string): ThreadInfo[] {
  const file = path.join(stateDir, STATE_DB_FILE);
  if (!existsSync(file)) return [];
  const when = statSync(file).mtime.toISOString();
  const db = openSqliteFile(file, { readonly: true });
  try {
    const ids = (
      db.prepare("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''").all() as Array<{
        thread_id: string;
      }>
    ).map((r) => r.thread_id);
    return ids.map((id) => entryOf(id, "graph", threadMessages(db, id), when));
  } finally {
    db.close();
  }
}

function loopThreads(stateDir: string): ThreadInfo[] {
  const dir = path.join(stateDir, LOOP_THREADS_DIR);
  if (!existsSync(dir)) return [];
  const threads: ThreadInfo[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const file = path.join(dir, name);
    try {
      const stored = JSON.parse(readRegularTextSync(file, { maxBytes: MAX_STATE_FILE_BYTES })) as {
        messages?: Array<{ type?: string; data?: { content?: unknown } }>;
      };
      const messages = (stored.messages ?? []).map((m): [unknown, unknown] => [m.type, m.data?.content]);
      threads.push(entryOf(name.slice(0, -".json".length), "loop", messages, statSync(file).mtime.toISOString()));
    } catch {
      // A damaged loop thread is left out of the index.
    }
  }
  return threads;
}

/** Every thread the state folder holds, as index entries. */
export function rebuildThreadIndex(stateDir: string): ThreadInfo[] {
  let graph: ThreadInfo[] = [];
  try {
    graph = graphThreads(stateDir);
  } catch {
    // A damaged state.sqlite is reported when a run opens it; the loop's threads still count.
  }
  return [...graph, ...loopThreads(stateDir)];
}
