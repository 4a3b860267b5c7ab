// Drafts without a body (or with an empty or blank one) count 0 words; real bodies still count right.
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

const { renderFeed } = await import(pathToFileURL(path.resolve("src/feed.js")).href);
const { wordCount } = await import(pathToFileURL(path.resolve("src/text.js")).href);
assert.equal(renderFeed([{ title: "Draft" }]), "Draft (0 words)");
assert.equal(renderFeed([{ title: "Empty", body: "" }, { title: "Blank", body: "  \n " }]), "Empty (0 words)\nBlank (0 words)");
assert.equal(renderFeed([{ title: "Hello", body: " one two\nthree  " }]), "Hello (3 words)");
assert.equal(wordCount("a b"), 2);
console.log("ok");
