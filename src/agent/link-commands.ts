import path from "node:path";
import { classifyCommand } from "../security/classify.js";
import { callEffects, type ToolLike } from "../policy/effects.js";

/**
 * Command steps that make hard links: their snapshot after scans every file instead of asking the
 * file watcher (snapshots/watch.ts). A link made to a workspace file from outside the
 * workspace gives the watcher no event, and a write through it gives none either, so such a
 * step's changes, and later steps' writes through the link, could be missed. The scan records
 * the files and starts the watcher's next sweep, which finds the new link and from then on looks
 * at that file on every step. Read from what the command line shows (the classifier's commands,
 * wrappers like `sh -c`, `xargs` and `find -exec` unwrapped); a script, a program or a variable
 * that makes one unseen is not caught here (the watcher's periodic scan is the way out).
 */

/** Short options of `ln` and `cp` that take a value (the rest of the word, or the next one). */
const VALUED_SHORT = new Set(["S", "t"]);

/** Whether one of the short options in the words is `letter` (`-al` holds `l`; `-S.bak` holds none). */
function hasShort(args: readonly string[], letter: string): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") return false;
    if (!a.startsWith("-") || a.startsWith("--") || a.length < 2) continue;
    for (let j = 1; j < a.length; j++) {
      const ch = a[j]!;
      if (ch === letter) return true;
      if (VALUED_SHORT.has(ch)) {
        if (j === a.length - 1) i++; // its value is the next word
        break;
      }
    }
  }
  return false;
}

/** Whether a long option in the words is `name` or an unambiguous start of it (`--sym` for `--symbolic`). */
function hasLong(args: readonly string[], name: string, shortest: number): boolean {
  for (const a of args) {
    if (a === "--") return false;
    const bare = a.split("=")[0]!;
    if (bare.length >= shortest && name.startsWith(bare)) return true;
  }
  return false;
}

/** Which hard-link maker one command (argv, after unwrapping) is, if it is one. */
export function hardLinkMaker(argv: readonly string[]): string | undefined {
  const name = path.basename(argv[0] ?? "");
  const args = argv.slice(1);
  switch (name) {
    case "link":
      return "`link`";
    case "ln":
      return hasShort(args, "s") || hasLong(args, "--symbolic", 4) ? undefined : "`ln` (without -s)";
    case "cp":
      return hasShort(args, "l") || hasLong(args, "--link", 4) ? "`cp -l`" : undefined;
    case "rsync":
      return args.some((a) => a.startsWith("--link-dest")) ? "`rsync --link-dest`" : undefined;
    default:
      return undefined;
  }
}

/** Why a whole snapshot after these calls must scan (a command makes hard links), or undefined. */
export async function hardLinkScanReason(
  workspace: string,
  calls: ReadonlyArray<{ name: string; args?: Record<string, unknown> }>,
  tools?: readonly ToolLike[],
): Promise<string | undefined> {
  for (const call of calls) {
    const command = call.args?.command;
    if (typeof command !== "string") continue;
    if (callEffects({ name: call.name, args: call.args ?? {} }, tools).kind !== "execute") continue;
    const reason = await commandHardLinkReason(workspace, command);
    if (reason) return reason;
  }
  return undefined;
}

/** Why a command line's step must scan: the hard-link maker it runs, or undefined. */
export async function commandHardLinkReason(workspace: string, command: string): Promise<string | undefined> {
  let commands: string[][];
  try {
    ({ commands } = await classifyCommand(command, { workspace }));
  } catch (err) {
    return `the command could not be read for hard links (${(err as Error).message})`;
  }
  for (const argv of commands) {
    const maker = hardLinkMaker(argv);
    if (maker) return `the command makes hard links (${maker}), which the file watcher cannot see`;
  }
  return undefined;
}
