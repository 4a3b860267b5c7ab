import { test } from "node:test";
import assert from "node:assert/strict";
import { Cache } from "../src/cache.js";

test("loads each key once", async () => {
  let calls = 0;
  const cache = new Cache(async (key) => {
    calls++;
    return key.toUpperCase();
  });
  assert.equal(await cache.get("a"), "A");
  assert.equal(await cache.get("a"), "A");
  assert.equal(calls, 1);
});

test("concurrent gets share one load", async () => {
  let calls = 0;
  const cache = new Cache(async (key) => {
    calls++;
    return key;
  });
  await Promise.all([cache.get("k"), cache.get("k"), cache.get("k")]);
  assert.equal(calls, 1);
});
