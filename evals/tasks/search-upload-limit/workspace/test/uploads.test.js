import { test } from "node:test";
import assert from "node:assert/strict";
import { checkUpload } from "../src/lib/uploads.js";

test("small images are accepted", () => {
  assert.equal(checkUpload({ type: "image/png", size: 1024 }), undefined);
});

test("other types are refused", () => {
  assert.match(checkUpload({ type: "application/pdf", size: 1024 }), /not allowed/);
});
