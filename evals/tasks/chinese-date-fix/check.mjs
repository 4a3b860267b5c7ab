// 无效日期返回 "无效日期"，普通日期不变，测试里有新用例且全部通过，回答用中文。
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
const { formatDate } = await import(pathToFileURL(path.resolve("src/date.js")).href);
if (formatDate(new Date("abc")) !== "无效日期") fail(`formatDate(new Date("abc")) returns ${JSON.stringify(formatDate(new Date("abc")))}`);
if (formatDate(new Date(2026, 10, 30)) !== "2026-11-30") fail("formatDate of a valid date changed");
const tests = readFileSync("test/date.test.js", "utf8");
if (!tests.includes("无效日期")) fail("test/date.test.js has no test for an invalid date");
if (!tests.includes('"2026-01-05"')) fail("the original test was removed");
execFileSync(process.execPath, ["--test"], { stdio: "inherit" });
const answer = readFileSync(process.env.EVAL_FINAL_FILE, "utf8");
if (!/[\u4e00-\u9fff]/u.test(answer)) fail(`the answer is not in Chinese: ${answer}`);
console.log("ok");
