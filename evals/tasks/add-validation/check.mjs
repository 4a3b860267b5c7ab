// Bad names and emails throw TypeError, good ones still work, and the tests cover the new cases and pass.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fail = (why) => {
  console.log(why);
  process.exit(1);
};
const { createUser } = await import(pathToFileURL(path.resolve("src/users.js")).href);
const bad = [
  { name: "", email: "a@b.c" },
  { name: "   ", email: "a@b.c" },
  { name: "Ada", email: "ada.example.com" },
  { name: "Ada", email: "@example.com" },
  { name: "Ada", email: "ada@" },
];
for (const input of bad) {
  let error;
  try {
    createUser(input);
  } catch (err) {
    error = err;
  }
  if (!(error instanceof TypeError)) fail(`createUser(${JSON.stringify(input)}) did not throw a TypeError`);
}
const good = createUser({ name: " Grace ", email: "Grace@Navy.MIL" });
if (good.name !== "Grace" || good.email !== "grace@navy.mil") fail(`a valid user came out as ${JSON.stringify(good)}`);
const tests = readFileSync("test/users.test.js", "utf8");
if (!/TypeError/.test(tests) || !/throws/.test(tests)) fail("test/users.test.js has no test that expects a TypeError");
execFileSync(process.execPath, ["--test"], { stdio: "inherit" });
console.log("ok");
