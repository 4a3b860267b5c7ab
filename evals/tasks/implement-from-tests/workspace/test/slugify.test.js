import { test } from "node:test";
import assert from "node:assert/strict";
import { slugify } from "../src/slugify.js";

test("lower-cases words and joins them with dashes", () => {
  assert.equal(slugify("Hello, World!"), "hello-world");
});

test("collapses runs of spaces and punctuation", () => {
  assert.equal(slugify("  Many   spaces -- and / slashes "), "many-spaces-and-slashes");
});

test("drops accents", () => {
  assert.equal(slugify("Crème brûlée à Paris"), "creme-brulee-a-paris");
});

test("keeps digits", () => {
  assert.equal(slugify("Top 10 tips for 2026"), "top-10-tips-for-2026");
});

test("trims dashes at both ends", () => {
  assert.equal(slugify("--Already-Slugged--"), "already-slugged");
});

test("symbols only give an empty slug", () => {
  assert.equal(slugify("!!! ??? ..."), "");
});
