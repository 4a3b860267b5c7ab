// data/users.json is exactly the CSV's rows, the quoted name with a comma kept whole.
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";

let users;
try {
  users = JSON.parse(readFileSync("data/users.json", "utf8"));
} catch (err) {
  console.log(`cannot read data/users.json as JSON: ${err.message}`);
  process.exit(1);
}
assert.deepEqual(users, [
  { id: 1, name: "Ada Lovelace", email: "ada@example.com", age: 36 },
  { id: 2, name: "Alan Turing", email: "alan@example.com", age: 41 },
  { id: 3, name: "Hopper, Grace", email: "grace@example.com", age: 85 },
  { id: 4, name: "Linus Torvalds", email: "linus@example.com", age: 56 },
]);
console.log("ok");
