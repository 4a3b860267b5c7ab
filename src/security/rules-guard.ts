import path from "node:path";
import { openWorkspace, resolvePath } from "../workspace/paths.js";
import { RULES_FILES } from "./rules.js";

/**
 * Calls that could create or change the project's command rules ask in every approval mode:
 * a model that may write its own allow rules has no rules. Kept apart from the classifier: a
 * plain check of the command text, and of where a file tool's path really leads.
 */

/** What a command must name to reach a rules file: `mini-cursor.config.json`, or the `.mini-cursor` folder. */
const RULES_NAMES = [...new Set(RULES_FILES.map((f) => f.split("/")[0]!))];

/**
 * Why a command must ask because it may create or change a rules file, or undefined. Any
 * mention of a rules file's name (or of the `.mini-cursor` folder) counts, whatever the program
 * (`cp`, `mv`, `curl -O`, `wget`, `tee`, a redirection, a script): reading it is rare enough.
 */
export function commandRulesReason(command: string): string | undefined {
  const hit = RULES_NAMES.find((name) => command.includes(name));
  return hit ? `may create or change the project's command rules (it names ${hit})` : undefined;
}

/** Why a write_file/edit_file call must ask: its path leads (also through a symlink, dangling or not) to a rules file. */
export async function fileRulesReason(workspace: string, filePath: string): Promise<string | undefined> {
  if (!filePath) return undefined;
  try {
    const ws = await openWorkspace(workspace);
    const target = await resolvePath(ws, filePath);
    const rel = path.relative(ws.root, target.absolute).split(path.sep).join("/");
    if ((RULES_FILES as readonly string[]).includes(rel)) return `changes the project's command rules (${filePath} is ${rel})`;
  } catch {
    // Outside the workspace or invalid: the tool refuses it anyway.
  }
  return undefined;
}
