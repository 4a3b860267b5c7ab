// formatPrice lives once, in src/money.js, both modules import it, and the behaviour is the same.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import assert from "node:assert/strict";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
let money;
try {
  money = await import(pathToFileURL(path.resolve("src/money.js")).href);
} catch (err) {
  fail(`cannot import src/money.js: ${err.message}`);
}
if (typeof money.formatPrice !== "function") fail("src/money.js does not export formatPrice");
assert.equal(money.formatPrice(4250), "42.50 EUR");
assert.equal(money.formatPrice(-500, "USD"), "-5.00 USD");
for (const file of ["src/cart.js", "src/invoice.js"]) {
  const text = readFileSync(file, "utf8");
  if (/function\s+formatPrice|formatPrice\s*=\s*(\(|function)/.test(text)) fail(`${file} still defines formatPrice`);
  if (!/import\s*\{[^}]*\bformatPrice\b[^}]*\}\s*from\s*["']\.\/money\.js["']/.test(text)) fail(`${file} does not import formatPrice from ./money.js`);
}
const original = readFileSync(path.join(process.env.EVAL_TASK_DIR, "workspace/test/shop.test.js"), "utf8");
if (readFileSync("test/shop.test.js", "utf8") !== original) fail("test/shop.test.js was changed");
execFileSync(process.execPath, ["--test"], { stdio: "inherit" });
console.log("ok");
