import { realpathSync } from "node:fs";
import path from "node:path";
import { HARMLESS_DEVICES, HOME_SECRETS, SHARED_DIRS, SYSTEM_DIRS, TEMP_DIRS } from "./classify-tables.js";
import { RULES_FILES } from "./rules.js";
import type { Where } from "./classify-state.js";
import type { Word } from "./shell-parse.js";

/** A table's list (`"/etc /usr"`) as words. */
const list = (text: string) => text.split(" ");

/**
 * Where a path a command names lies, seen from the workspace: inside it, in a temporary folder,
 * in the home folder, on a system path... The classifier asks before commands that delete or
 * write outside the workspace, and the sandbox hides the same credentials folders.
 */

const SYSTEM = new Set(list(SYSTEM_DIRS));
const SHARED = new Set(list(SHARED_DIRS));
const TEMP = list(TEMP_DIRS);
const HARMLESS = new Set(list(HARMLESS_DEVICES));

export type LocationKind =
  | "workspace" // the workspace root itself (or everything in it, for a glob)
  | "inside"
  | "rules" // the project's rules files (or the folder holding the local one)
  | "temp" // under /tmp, /var/tmp or /dev/shm (and the workspace is not)
  | "null-device" // /dev/null, /dev/stdout, /dev/fd/N...
  | "device"
  | "root"
  | "system"
  | "home" // the home folder itself (or everything in it)
  | "under-home"
  | "secret" // a credentials file or folder in the home folder
  | "outside"
  | "unknown" // only known at run time
  | "unknown-folder"; // relative to a folder only known at run time (after `cd "$(…)"`): maybe anywhere

export interface Location {
  kind: LocationKind;
  /** The absolute path, when known. */
  path?: string;
}

export interface Places {
  workspace: string;
  home: string;
}

/** The workspace as given and as resolved through symlinks, so both spellings count as inside. */
function spellings(dir: string): string[] {
  const out = [path.resolve(dir)];
  try {
    const real = realpathSync(dir);
    if (!out.includes(real)) out.push(real);
  } catch {
    // Not there (yet): the given spelling is all we have.
  }
  return out;
}

const within = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/** Classifies an absolute, normalized path. `glob` means "everything in it". */
export function classifyPath(p: string, places: Places): LocationKind {
  for (const ws of spellings(places.workspace)) {
    if (p === ws) return "workspace";
    if (within(p, ws)) {
      const rel = path.relative(ws, p);
      if (RULES_FILES.some((f) => rel === f) || rel === path.dirname(RULES_FILES[0])) return "rules";
      return "inside";
    }
  }
  if (HARMLESS.has(p) || within(p, "/dev/fd") || within(p, "/proc/self/fd")) return "null-device";
  if (within(p, "/dev") && !within(p, "/dev/shm")) return "device";
  if (p === "/") return "root";
  for (const home of spellings(places.home)) {
    if (HOME_SECRETS.some((s) => within(p, path.join(home, s)))) return "secret";
    if (p === home) return "home";
    if (within(p, home)) return "under-home";
  }
  // A temporary folder is only harmless when the workspace is not in it (siblings could be projects).
  const temp = TEMP.find((t) => within(p, t));
  if (temp) return spellings(places.workspace).some((ws) => within(ws, temp)) ? "outside" : "temp";
  const top = `/${p.split("/")[1] ?? ""}`;
  if (SYSTEM.has(top)) return SHARED.has(top) && p !== top ? "outside" : "system";
  return "outside";
}

const GLOB = /[*?[]/;

/** The path with symlinks resolved as far as it exists (the rest appended as is). */
function realTarget(p: string): string {
  let existing = p;
  const rest: string[] = [];
  while (existing !== path.dirname(existing)) {
    try {
      const real = realpathSync(existing);
      return rest.length > 0 ? path.join(real, ...rest.reverse()) : real;
    } catch {
      rest.push(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
  return p;
}

/**
 * Where a word used as a path points, with `cwd` the directory relative paths start from
 * (null when a `cd` made it unknown: then a relative path may lie anywhere, and counts as
 * outside the workspace). A word with a run-time part is located by its static prefix when
 * that is absolute or in the home folder; otherwise it is unknown.
 */
export function locate(word: Word, cwd: string | null, places: Places): Location {
  let value = word.value;
  if (word.dynamic) {
    const cut = value.search(/[$`]|[<>]\(/);
    const prefix = cut === -1 ? value : value.slice(0, cut);
    const dir = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/") + 1) : prefix === "~" ? "~" : "";
    if (!(dir.startsWith("/") || dir.startsWith("~"))) return { kind: cwd === null ? "unknown-folder" : "unknown" };
    const at = locate({ ...word, value: dir, dynamic: false }, cwd, places);
    // Under the workspace or /tmp, `..` in the run-time part could still lead anywhere.
    if (at.kind === "inside" || at.kind === "workspace" || at.kind === "temp") return { kind: "unknown" };
    return at.kind === "home" ? { kind: "under-home", path: at.path } : at;
  }
  let glob = false;
  if (GLOB.test(value)) {
    glob = true;
    const parts = value.split("/");
    const firstGlob = parts.findIndex((s) => GLOB.test(s));
    value = parts.slice(0, firstGlob).join("/") || (value.startsWith("/") ? "/" : ".");
  }
  let absolute: string;
  if (value === "~" || value.startsWith("~/")) absolute = path.join(places.home, value.slice(1));
  else if (value.startsWith("~"))
    return { kind: "outside", path: value }; // another user's home
  else if (path.isAbsolute(value)) absolute = path.normalize(value);
  else if (cwd === null) return { kind: "unknown-folder" };
  else absolute = path.resolve(cwd, value);
  if (absolute.length > 1 && absolute.endsWith("/")) absolute = absolute.slice(0, -1);
  let kind = classifyPath(absolute, places);
  // A symlink already in the workspace may lead out of it (`ln -s ~ link`, then `rm -rf link/`).
  if (kind === "inside") {
    const real = realTarget(absolute);
    if (real !== absolute) {
      const realKind = classifyPath(real, places);
      if (realKind !== "inside" && realKind !== "rules") return { kind: realKind, path: real };
      kind = realKind;
    }
  }
  // `dir/*` is everything in dir: for the workspace or home, that is the folder itself.
  if (glob && kind === "inside" && spellings(places.workspace).includes(absolute))
    return { kind: "workspace", path: absolute };
  return { kind, path: absolute };
}

/** Whether writing there needs a person (deleting also asks in temporary folders). */
export function isOutside(kind: LocationKind): boolean {
  return !["workspace", "inside", "temp", "null-device", "unknown"].includes(kind);
}

/** Short descriptions for reasons: "in the home folder, outside the workspace". */
const DESCRIPTIONS: Partial<Record<LocationKind, string>> = {
  workspace: "the whole workspace",
  rules: "the project's command rules",
  device: "a device",
  root: "the root of the file system",
  system: "a system path",
  home: "the home folder",
  "under-home": "in the home folder, outside the workspace",
  secret: "credentials in the home folder",
  unknown: "a path only known at run time",
  "unknown-folder": "in a folder only known at run time, maybe outside the workspace",
};

export const describeLocation = (kind: LocationKind): string => DESCRIPTIONS[kind] ?? "outside the workspace";

/** A link the line creates, and where it leads. */
export interface Link {
  path: string;
  to: Location;
}

/**
 * Where `word` points from each folder the line may be in (null: only known at run time); a path
 * under a symlink the line created (`ln -s ~/x l`) is where the link leads.
 */
export function locateAll(word: Word, at: Where): Location[] {
  return at.here.map((cwd) => {
    const to = locate(word, cwd, at.places);
    const p = to.path;
    return (p && at.links.find((l) => p === l.path || p.startsWith(`${l.path}/`))?.to) || to;
  });
}
