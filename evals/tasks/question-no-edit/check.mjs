// A question changes nothing: every file is as it was, none added; and the answer explains the doubling wait.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
/** Files under dir, relative, without the folders mini-cursor or git keep. */
function files(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === ".git" || entry.name === ".mini-cursor") return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full, base) : [path.relative(base, full)];
  });
}
const original = path.join(process.env.EVAL_TASK_DIR, "workspace");
const before = files(original).sort();
const after = files(process.cwd()).sort();
const added = after.filter((f) => !before.includes(f));
if (added.length > 0) fail(`files were added to answer a question: ${added.join(", ")}`);
for (const file of before) {
  let now;
  try {
    now = readFileSync(file);
  } catch {
    fail(`${file} was deleted to answer a question`);
  }
  if (!now.equals(readFileSync(path.join(original, file)))) fail(`${file} was changed to answer a question`);
}
const answer = readFileSync(process.env.EVAL_FINAL_FILE, "utf8");
if (!answer.trim()) fail("the agent gave no answer");
if (!/doubl|twice|2 ?\*\* ?i|2\^|exponential/i.test(answer)) fail(`the answer does not say the wait doubles: ${answer}`);
console.log("ok");
