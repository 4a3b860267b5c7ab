import { promises as fs, type Dirent } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { formatSize } from "../workspace/files.js";
import { ALWAYS_HIDDEN, createIgnoreChecker } from "../workspace/ignore.js";
import { isInside, resolvePath, type Workspace } from "../workspace/paths.js";
import { openVerified, raced } from "../workspace/verified-open.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { isNotUtf8Name, NOT_UTF8_NAME } from "./errors.js";
import { LIST_DIRECTORY_PEERS, withPeerArguments } from "./aliases.js";

/** Most entries one listing shows; a bigger directory is better explored one level down. */
export const MAX_LIST_ENTRIES = 500;
/** Width of the kind column ("dir", "file", "link", "other") plus its gap. */
const KIND_WIDTH = 6;

const DESCRIPTION = `List the entries of a directory in the workspace. Paths are relative to the workspace root ("." is the root).
One entry per line: kind (dir, file, link, other), name, and size for files; directories first, then names in order.
A symlink shows its target and is not followed; one pointing outside the workspace is marked so.
.git and whatever .gitignore ignores are hidden, and the listing says how many were hidden.
At most ${MAX_LIST_ENTRIES} entries are shown; list a subdirectory to see deeper.`;

const schemaObject = z.strictObject({
  directoryPath: z
    .string()
    .optional()
    .describe('Path of the directory, relative to the workspace root ("." for the root).'),
});

/** Other agents' names (path, dir_path, ...) are accepted: aliases.ts. */
const schema = withPeerArguments(schemaObject, LIST_DIRECTORY_PEERS);

type ListDirectoryInput = z.infer<typeof schemaObject>;

type EntryKind = "dir" | "file" | "link" | "other";

interface Entry {
  name: string;
  kind: EntryKind;
}

function kindOf(dirent: Dirent): EntryKind {
  if (dirent.isSymbolicLink()) return "link";
  if (dirent.isDirectory()) return "dir";
  if (dirent.isFile()) return "file";
  return "other";
}

/** Where a symlink points and what is there, without following it for the model. */
async function describeLink(ws: Workspace, linkPath: string): Promise<string> {
  const target = await fs.readlink(linkPath);
  const lexical = path.resolve(path.dirname(linkPath), target);
  const real = await fs.realpath(linkPath).catch(() => undefined);
  if (!isInside(ws.root, real ?? lexical)) return `-> ${target} (outside the workspace, not followed)`;
  if (!real) return `-> ${target} (broken link)`;
  const stat = await fs.stat(real);
  return `-> ${target}${stat.isDirectory() ? " (dir)" : ""}`;
}

/** `dirIo` reaches the opened directory itself (its descriptor); `dirAbs` is its name, for messages. */
async function formatEntry(ws: Workspace, dirAbs: string, dirIo: string, entry: Entry): Promise<string> {
  const kind = entry.kind.padEnd(KIND_WIDTH);
  const abs = path.join(dirAbs, entry.name);
  switch (entry.kind) {
    case "dir":
      return `${kind}${entry.name}/`;
    case "file":
      return `${kind}${entry.name}  ${formatSize((await fs.lstat(path.join(dirIo, entry.name))).size)}`;
    case "link":
      return `${kind}${entry.name} ${await describeLink(ws, abs)}`;
    default:
      return `${kind}${entry.name}`;
  }
}

/**
 * An entry that could not be looked at after the folder was read: its name is not UTF-8 (the
 * listing gave it with U+FFFD, so no tool can open it), or it was removed in between. Either is
 * one line of the listing, not a failure of the whole listing.
 */
function unreadableEntry(entry: Entry, err: unknown): string {
  const kind = entry.kind.padEnd(KIND_WIDTH);
  if (isNotUtf8Name(err, entry.name))
    return `${kind}${entry.name}  (${NOT_UTF8_NAME}: rename it with a command to work on it)`;
  if ((err as NodeJS.ErrnoException).code === "ENOENT") return `${kind}${entry.name}  (removed while listing)`;
  throw err;
}

/** "(3 entries hidden by .gitignore)", with .git mentioned when it was there too. */
export function hiddenNote(ignoredCount: number, gitHidden: boolean): string | undefined {
  if (ignoredCount > 0) return `(${countWord(ignoredCount)} hidden by .gitignore${gitHidden ? ", and .git" : ""})`;
  return gitHidden ? "(.git hidden)" : undefined;
}

interface Partition {
  visible: Entry[];
  ignoredCount: number;
  gitHidden: boolean;
}

/** Splits entries into shown and hidden ones; `ignored` undefined means show everything but .git. */
function partition(
  dirents: readonly Dirent[],
  relDir: string,
  ignored: ((relPath: string, isDirectory: boolean) => boolean) | undefined,
): Partition {
  const result: Partition = { visible: [], ignoredCount: 0, gitHidden: false };
  for (const dirent of dirents) {
    const entry = { name: dirent.name, kind: kindOf(dirent) };
    if (ALWAYS_HIDDEN.has(entry.name)) {
      result.gitHidden = true;
    } else if (ignored?.(relDir === "." ? entry.name : `${relDir}/${entry.name}`, entry.kind === "dir")) {
      result.ignoredCount++;
    } else {
      result.visible.push(entry);
    }
  }
  // Directories first, then everything else; by code point within each, so order is stable everywhere.
  const rank = (e: Entry) => (e.kind === "dir" ? 0 : 1);
  result.visible.sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return result;
}

function countWord(n: number): string {
  return `${n} ${n === 1 ? "entry" : "entries"}`;
}

async function listDirectory(ctx: ToolContext, input: ListDirectoryInput): Promise<string> {
  const ws = await ctx.workspace();
  // Optional rather than a zod default, so the JSON schema the model sees does not require it.
  const target = await resolvePath(ws, input.directoryPath ?? ".", { directory: true });
  const relDir = target.display.split(path.sep).join("/");
  // The .gitignore files from the root down are read as they are first asked about.
  const ignored = createIgnoreChecker(ws.root).pathIgnored;
  // The model asked for this directory by name: when git ignores it (node_modules, dist),
  // filtering would hide everything, so show it whole and say why.
  const dirIgnored = relDir !== "." && ignored(relDir, true);
  // Open first, then verify what was opened: a folder swapped for a symlink lists nothing outside.
  const opened = await openVerified(ws, target.absolute, input.directoryPath ?? ".");
  try {
    if (!opened.stat.isDirectory()) throw raced(input.directoryPath ?? ".");
    const dirents = await fs.readdir(opened.path, { withFileTypes: true });
    const { visible, ignoredCount, gitHidden } = partition(dirents, relDir, dirIgnored ? undefined : ignored);
    const hidden = hiddenNote(ignoredCount, gitHidden);
    if (visible.length === 0) {
      return hidden ? `Directory ${relDir} has no visible entries ${hidden}.` : `Directory ${relDir} is empty.`;
    }
    const shown = visible.slice(0, MAX_LIST_ENTRIES);
    const header =
      shown.length < visible.length
        ? `Directory ${relDir} (${countWord(visible.length)}, showing the first ${MAX_LIST_ENTRIES}):`
        : `Directory ${relDir} (${countWord(visible.length)}):`;
    const lines = [header];
    for (const entry of shown) {
      lines.push(
        await formatEntry(ws, target.absolute, opened.path, entry).catch((err: unknown) => unreadableEntry(entry, err)),
      );
    }
    if (shown.length < visible.length) {
      lines.push(`(${visible.length - shown.length} more not shown; listings stop at ${MAX_LIST_ENTRIES} entries.)`);
    }
    if (dirIgnored) lines.push("(This directory is ignored by .gitignore; showing all its entries.)");
    if (hidden) lines.push(hidden);
    return lines.join("\n");
  } finally {
    await opened.handle.close();
  }
}

export function listDirectoryTool(ctx: ToolContext) {
  return declared(
    tool((input) => listDirectory(ctx, input), { name: "list_directory", description: DESCRIPTION, schema }),
    { kind: "read", paths: { directoryPath: "path" } },
  );
}
