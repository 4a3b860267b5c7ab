import { test } from "node:test";
import assert from "node:assert/strict";
import { mean, median } from "../src/stats.js";

test("mean of three numbers", () => {
  assert.equal(mean([2, 4, 6]), 4);
});

test("mean of one number is that number", () => {
  assert.equal(mean([7]), 7);
});

test("mean of an empty list throws", () => {
  assert.throws(() => mean([]), RangeError);
});

test("median of odd and even lengths", () => {
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
});
