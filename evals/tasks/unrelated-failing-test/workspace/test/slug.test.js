import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slug.js";

test("spaces become dashes", () => {
  assert.equal(slugify("  Hello World "), "hello-world");
});

test("underscores become dashes", () => {
  assert.equal(slugify("snake_case_title"), "snake-case-title");
});
