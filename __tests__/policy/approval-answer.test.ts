import { createTools } from "../../src/tools/index.js";
import { normalizeResponse } from "../../src/policy/approval-answer.js";
import { checkEdit } from "../../src/policy/edit-call.js";
import { editNote, MAX_EDIT_NOTE_CHARS, sameArguments } from "../../src/guard/results.js";
import { createApprovalCode, STUDIO_CODE_MISSING, studioResponse } from "../../src/graph/studio-secret.js";
import { makeTempDir } from "../helpers/tmp.js";

/** How an answer is read (issue 32, item 4: the edit decision), whoever gave it. */

test("an edit keeps its arguments only when they are a JSON object; unknown decisions are denials", () => {
  expect(normalizeResponse({ decision: "edit", args: { command: "ls" } })).toEqual({
    decision: "edit",
    args: { command: "ls" },
  });
  // No usable arguments: still an edit (the review asks again), never a run of anything.
  expect(normalizeResponse({ decision: "edit", args: "ls" })).toEqual({ decision: "edit" });
  expect(normalizeResponse({ decision: "edit", args: ["ls"] })).toEqual({ decision: "edit" });
  expect(normalizeResponse({ decision: "edit", args: null })).toEqual({ decision: "edit" });
  expect(normalizeResponse({ decision: "edit" })).toEqual({ decision: "edit" });
  // Feedback and other fields of an edit are dropped; an approval carries no args.
  expect(normalizeResponse({ decision: "edit", args: {}, feedback: "x", unattended: true })).toEqual({
    decision: "edit",
    args: {},
  });
  expect(normalizeResponse({ decision: "approve", args: { command: "rm -rf /" } })).toEqual({
    decision: "approve",
    feedback: undefined,
  });
  expect(normalizeResponse({ decision: "EDIT", args: { command: "ls" } })).toEqual({
    decision: "deny",
    feedback: undefined,
  });
  expect(normalizeResponse(undefined)).toEqual({ decision: "deny", feedback: undefined });
});

test("under Studio an edit needs the interrupt's code exactly as an approval does", () => {
  const code = createApprovalCode();
  const edit = { decision: "edit", args: { command: "ls" } };
  expect(studioResponse({ ...edit, code }, code)).toEqual({ decision: "edit", args: { command: "ls" } });
  expect(studioResponse({ ...edit, code: code.toLowerCase().replace("-", "") }, code)).toEqual({
    decision: "edit",
    args: { command: "ls" },
  });
  const refused = { decision: "deny", feedback: STUDIO_CODE_MISSING };
  expect(studioResponse(edit, code)).toEqual(refused);
  expect(studioResponse({ ...edit, code: createApprovalCode() }, code)).toEqual(refused);
  expect(studioResponse({ decision: "edit", code }, code)).toEqual({ decision: "edit" });
  expect(studioResponse({ decision: "approve" }, code)).toEqual(refused);
});

describe("checkEdit", () => {
  const tmp = makeTempDir();
  afterAll(() => tmp.cleanup());
  const tools = createTools({ workspace: tmp.dir });
  const call = { name: "write_file", args: { filePath: "a.txt", content: "a" } };

  test("fits, changed or unchanged (key order does not matter)", () => {
    expect(checkEdit(call, { filePath: "b.txt", content: "a" }, tools)).toEqual({
      ok: true,
      args: { filePath: "b.txt", content: "a" },
      unchanged: false,
    });
    expect(checkEdit(call, { content: "a", filePath: "a.txt" }, tools)).toEqual({
      ok: true,
      args: { content: "a", filePath: "a.txt" },
      unchanged: true,
    });
    expect(sameArguments({ a: { x: 1, y: 2 } }, { a: { y: 2, x: 1 } })).toBe(true);
    expect(sameArguments({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  });

  test("does not fit, or is not an object: says what is wrong, for the person", () => {
    expect(checkEdit(call, { filePath: 3, content: "a" }, tools)).toEqual({
      ok: false,
      error:
        "the edited arguments do not fit write_file: write_file got invalid arguments:\n- filePath: Invalid input: expected string, received number.",
    });
    expect(checkEdit(call, "a.txt", tools)).toEqual({
      ok: false,
      error: "the edit must be a JSON object of write_file's arguments",
    });
  });

  test("the model's note repeats at most MAX_EDIT_NOTE_CHARS of the arguments", () => {
    const big = editNote("write_file", { filePath: "a", content: "x".repeat(MAX_EDIT_NOTE_CHARS * 2) });
    const json = JSON.stringify({ filePath: "a", content: "x".repeat(MAX_EDIT_NOTE_CHARS * 2) });
    expect(big).toBe(
      `[The user edited this write_file call before approving it. It ran with these arguments instead of yours: ${json.slice(0, MAX_EDIT_NOTE_CHARS)}… (cut: ${json.length - MAX_EDIT_NOTE_CHARS} more characters)]`,
    );
  });
});
