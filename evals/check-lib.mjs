// What several tasks' check.mjs files ask of a run that was only to look: the workspace copy
// (the check's cwd) holds exactly the task's original files, unchanged, and the final answer.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** Prints why the check failed and ends it with status 1. */
export function fail(why) {
  console.log(why);
  process.exit(1);
}

/** Files under dir, relative, without the folders mini-cursor or git keep. */
function files(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === ".git" || entry.name === ".mini-cursor") return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full, base) : [path.relative(base, full)];
  });
}

/**
 * Fails unless the run's workspace (cwd) has the task's workspace/ files, none added, none
 * deleted, none changed; `why` ends each failure's sentence (e.g. " to answer a question").
 */
export function expectWorkspaceUnchanged(why = "") {
  const original = path.join(process.env.EVAL_TASK_DIR, "workspace");
  const before = files(original).sort();
  const after = files(process.cwd()).sort();
  const added = after.filter((f) => !before.includes(f));
  if (added.length > 0) fail(`files were added${why}: ${added.join(", ")}`);
  for (const file of before) {
    let now;
    try {
      now = readFileSync(file);
    } catch {
      fail(`${file} was deleted${why}`);
    }
    if (!now.equals(readFileSync(path.join(original, file)))) fail(`${file} was changed${why}`);
  }
}

/** The run's final answer (EVAL_FINAL_FILE); fails when it is empty. */
export function finalAnswer() {
  const answer = readFileSync(process.env.EVAL_FINAL_FILE, "utf8");
  if (!answer.trim()) fail("the agent gave no answer");
  return answer;
}
