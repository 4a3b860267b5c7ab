import { test } from "node:test";
import assert from "node:assert/strict";
import { getUserName } from "../src/users.js";
import { greet } from "../src/greeting.js";
import { teamReport } from "../src/report.js";

test("getUserName prefers the nickname", () => {
  assert.equal(getUserName({ firstName: "Ada", lastName: "Lovelace", nickname: "ada" }), "ada");
  assert.equal(getUserName({ firstName: "Ada", lastName: "Lovelace" }), "Ada Lovelace");
});

test("greet and teamReport use the display name", () => {
  assert.equal(greet({ firstName: "Alan", lastName: "Turing" }), "Welcome back, Alan Turing!");
  assert.equal(teamReport([{ nickname: "grace", roles: ["admin"] }, { firstName: "Linus", lastName: "" }]), "* grace\n- Linus");
});
