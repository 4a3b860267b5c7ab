// Two explorations through parallel task calls change nothing, and the answer names both ports.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
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
if (after.join() !== before.join()) fail(`the files changed: ${after.join(", ")}`);
for (const file of before)
  if (!readFileSync(file).equals(readFileSync(path.join(original, file)))) fail(`${file} was changed`);
const answer = readFileSync(process.env.EVAL_FINAL_FILE, "utf8");
if (!/\b8080\b/.test(answer)) fail(`the answer does not name the api's port 8080: ${answer}`);
if (!/\b3000\b/.test(answer)) fail(`the answer does not name the web front end's port 3000: ${answer}`);
console.log("ok");
