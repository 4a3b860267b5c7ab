// The upload limit is 25 MB, uploads up to it pass, and no other file changed.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
const uploads = await import(pathToFileURL(path.resolve("src/lib/uploads.js")).href);
if (uploads.MAX_UPLOAD_SIZE !== 25 * 1024 * 1024) fail(`MAX_UPLOAD_SIZE is ${uploads.MAX_UPLOAD_SIZE}, not ${25 * 1024 * 1024}`);
if (uploads.checkUpload({ type: "image/jpeg", size: 20 * 1024 * 1024 }) !== undefined) fail("a 20 MB JPEG is still refused");
if (uploads.checkUpload({ type: "image/jpeg", size: 26 * 1024 * 1024 }) === undefined) fail("a 26 MB JPEG is accepted");
const original = path.join(process.env.EVAL_TASK_DIR, "workspace");
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
for (const file of walk(original)) {
  const rel = path.relative(original, file);
  if (rel === path.join("src", "lib", "uploads.js")) continue;
  if (readFileSync(rel, "utf8") !== readFileSync(file, "utf8")) fail(`${rel} was changed`);
}
console.log("ok");
