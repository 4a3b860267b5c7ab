import { formatSize } from "../workspace/files.js";
import { openWorkspace, PathError, resolvePath } from "../workspace/paths.js";
import { openVerified, type VerifiedFile } from "../workspace/verified-open.js";
import { gateText } from "../workspace/output-gate.js";

/**
 * `@path` in a request, as Claude Code and Gemini CLI read it (issue 44 item 6): the file's text
 * goes with the request, after it, so the model has it without a read_file call. Only files in
 * the workspace (confined as every tool's path is), text, within MAX_MENTION_BYTES each and
 * MAX_MENTIONS_BYTES together; secrets in them are masked as in any tool result. A mention that
 * is not such a file is sent as typed, and the person is told why.
 */

/** The most of one file a mention attaches. */
export const MAX_MENTION_BYTES = 256 * 1024;
/** The most all mentions of one request attach together. */
export const MAX_MENTIONS_BYTES = 1024 * 1024;

/** `@` at the start of a word, then the path (up to whitespace). */
const MENTION = /(?<=^|\s)@([^\s@]+)/g;
/** Punctuation that ends a sentence, not a path: "look at @a.ts, then …". */
const TRAILING = /[,;:!?)\]}'"]+$|\.$/;

type Outcome = { attach: { path: string; text: string; bytes: number } } | { skip: string };

async function readMention(workspace: string, typed: string, room: number): Promise<Outcome> {
  const ws = await openWorkspace(workspace);
  let resolved: Awaited<ReturnType<typeof resolvePath>>;
  try {
    resolved = await resolvePath(ws, typed, { refuseHardLinks: true });
  } catch (err) {
    if (err instanceof PathError && err.code === "hard_link")
      return { skip: "a file with other hard links (one may be outside the workspace)" };
    return { skip: "not a path inside the workspace" };
  }
  if (!resolved.exists) return { skip: "no such file in the workspace" };
  if (resolved.isDirectory) return { skip: "a folder (the agent can list it)" };
  // Opened as read_file opens: no link followed, the descriptor checked to be inside the
  // workspace (a folder swapped for a link since is refused), no second hard link.
  let opened: VerifiedFile;
  try {
    opened = await openVerified(ws, resolved.absolute, typed, { refuseHardLinks: true });
  } catch (err) {
    if (err instanceof PathError) return { skip: err.message };
    throw err;
  }
  const { handle, stat: st } = opened;
  try {
    if (!st.isFile()) return { skip: "not a regular file" };
    if (st.size > Math.min(MAX_MENTION_BYTES, room))
      return {
        skip: `${formatSize(st.size)}, more than a mention attaches (${formatSize(MAX_MENTION_BYTES)} a file, ${formatSize(MAX_MENTIONS_BYTES)} a request); the agent can read it in parts`,
      };
    const bytes = await handle.readFile();
    if (bytes.includes(0)) return { skip: "not text" };
    return { attach: { path: resolved.display, text: gateText(bytes.toString("utf8")), bytes: bytes.length } };
  } finally {
    await handle.close();
  }
}

/**
 * The request with the files it mentions attached after it (`<file path="…">` blocks), and one
 * line per mention saying what became of it.
 */
export async function withMentionedFiles(
  request: string,
  workspace: string,
): Promise<{ request: string; notes: string[] }> {
  const typed = [...new Set([...request.matchAll(MENTION)].map((m) => m[1]!.replace(TRAILING, "")))].filter(Boolean);
  if (typed.length === 0) return { request, notes: [] };
  const blocks: string[] = [];
  const notes: string[] = [];
  let room = MAX_MENTIONS_BYTES;
  for (const name of typed) {
    let outcome: Outcome;
    try {
      outcome = await readMention(workspace, name, room);
    } catch (err) {
      outcome = { skip: `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
    }
    if ("skip" in outcome) {
      notes.push(`@${name}: ${outcome.skip}; sent as typed, not attached.`);
      continue;
    }
    const { path, text, bytes } = outcome.attach;
    room -= bytes;
    blocks.push(`<file path="${path}">\n${text.replace(/\n$/, "")}\n</file>`);
    notes.push(`@${name}: attached (${formatSize(bytes)}).`);
  }
  return { request: blocks.length > 0 ? `${request}\n\n${blocks.join("\n\n")}` : request, notes };
}
