import { test } from "node:test";
import assert from "node:assert/strict";
import { createUser } from "../src/users.js";

test("creates a user with a trimmed name and a lower-case email", () => {
  const user = createUser({ name: "  Ada ", email: "Ada@Example.COM" });
  assert.equal(user.name, "Ada");
  assert.equal(user.email, "ada@example.com");
  assert.equal(typeof user.id, "number");
});
