// package.json parses, has both scripts using node --test, and kept every other field.
import { readFileSync } from "node:fs";
import path from "node:path";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
let pkg;
try {
  pkg = JSON.parse(readFileSync("package.json", "utf8"));
} catch (err) {
  fail(`package.json is not valid JSON: ${err.message}`);
}
const original = JSON.parse(readFileSync(path.join(process.env.EVAL_TASK_DIR, "workspace/package.json"), "utf8"));
const watch = pkg.scripts?.["test:watch"] ?? "";
const coverage = pkg.scripts?.coverage ?? "";
if (!/node --test\b/.test(watch) || !/--watch\b/.test(watch)) fail(`scripts["test:watch"] is ${JSON.stringify(watch)}`);
if (!/node --test\b/.test(coverage) || !/--experimental-test-coverage\b/.test(coverage)) fail(`scripts.coverage is ${JSON.stringify(coverage)}`);
if (pkg.scripts.test !== original.scripts.test) fail("scripts.test changed");
for (const key of Object.keys(original)) {
  if (key !== "scripts" && JSON.stringify(pkg[key]) !== JSON.stringify(original[key])) fail(`package.json field ${key} changed`);
}
console.log("ok");
