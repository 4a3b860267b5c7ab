import { test } from "node:test";
import assert from "node:assert/strict";
import { formatDate } from "../src/date.js";

test("格式化普通日期", () => {
  assert.equal(formatDate(new Date(2026, 0, 5)), "2026-01-05");
});
