// A failed load is retried on the next get; successes stay cached; concurrent gets share one load.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
const { Cache } = await import(pathToFileURL(path.resolve("src/cache.js")).href);
let calls = 0;
let down = true;
const cache = new Cache(async (key) => {
  calls++;
  await new Promise((r) => setTimeout(r, 5));
  if (down) throw new Error("backend down");
  return `value of ${key}`;
});
const first = await Promise.allSettled([cache.get("x"), cache.get("x")]);
if (first.some((r) => r.status !== "rejected")) fail("a failing load did not reject");
if (calls !== 1) fail(`two concurrent gets made ${calls} loads`);
down = false;
let second;
try {
  second = await cache.get("x");
} catch (err) {
  fail(`after the backend recovered, get still rejects: ${err.message}`);
}
if (second !== "value of x") fail(`get returned ${second}`);
await cache.get("x");
if (calls !== 2) fail(`a successful load was not cached (${calls} loads)`);
execFileSync(process.execPath, ["--test"], { stdio: "inherit" });
console.log("ok");
