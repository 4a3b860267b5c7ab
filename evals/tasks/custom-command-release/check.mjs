// The run's request was the /release command's expansion (from the task's commands folder), and
// the release it asks for was made: version 2.1.0 everywhere, its note first in the changelog.
import { existsSync, readFileSync } from "node:fs";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
const EXPANDED =
  'Release version 2.1.0 with the note given after it: run `node scripts/release.mjs 2.1.0 "Greets in French"`. ' +
  "It sets the version in package.json, regenerates src/version.js and adds the note to CHANGELOG.md; do not edit those files by hand.";
const trace = process.env.EVAL_TRACE_FILE;
if (!trace || !existsSync(trace)) fail("there is no trace of the run");
const start = readFileSync(trace, "utf8")
  .split("\n")
  .filter((l) => l.startsWith("{"))
  .map((l) => JSON.parse(l))
  .find((e) => e.type === "run_start");
if (!start) fail("the trace has no run_start");
if (start.task !== EXPANDED) fail(`the request was not the /release command's expansion: ${JSON.stringify(start.task)}`);
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
if (pkg.version !== "2.1.0") fail(`package.json's version is ${pkg.version}, not 2.1.0`);
if (pkg.name !== "greeter") fail("package.json's name changed");
const version = readFileSync("src/version.js", "utf8");
if (version !== 'export const VERSION = "2.1.0";\n') fail(`src/version.js holds: ${version}`);
const log = readFileSync("CHANGELOG.md", "utf8");
const want = "# Changelog\n\n## 2.1.0\n\n- Greets in French\n\n## 2.0.0\n\n- Greets in English\n";
if (log !== want) fail(`CHANGELOG.md is not the 2.1.0 entry over the old ones: ${JSON.stringify(log)}`);
console.log("ok");
