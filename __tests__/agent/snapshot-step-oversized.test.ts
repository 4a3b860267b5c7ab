import { createTools } from "../../src/tools/index.js";
import { appendFileSync } from "node:fs";
import { expect, test } from "@jest/globals";
import { HumanMessage } from "@langchain/core/messages";
import { snapshotBeforeTools } from "../../src/agent/snapshot-step.js";
import { MAX_SNAPSHOT_FILE_BYTES, snapshotStore } from "../../src/snapshots/store.js";
import { putIn, useSnapshotWorkspace } from "../helpers/snapshot-workspace.js";

/**
 * Files over the snapshot limit are left out of snapshots, and a step that changes one says so
 * ("Not recorded for /undo"). An edit step names only the declared big files it changed: a
 * refused or failed edit of one changes nothing, and a notice then would be untrue.
 */

let ws = "";
useSnapshotWorkspace((space) => {
  ws = space.ws;
});

/** One edit step on `calls`' paths: runs `act` between the two snapshots and returns the notices. */
async function editStep(paths: string[], act: () => void): Promise<string[]> {
  const notices: string[] = [];
  const step = await snapshotBeforeTools({
    workspace: ws,
    threadId: "",
    messages: [new HumanMessage({ content: "edit", id: "request-1" })],
    calls: paths.map((filePath) => ({ name: "edit_file", args: { filePath, oldString: "a", newString: "b" } })),
    tools: createTools({ workspace: ws }),
    notice: (text) => notices.push(text),
  });
  act();
  await step.finish();
  return notices;
}

test("an edit step names the declared big files it changed, and none when it changed none", async () => {
  putIn(ws, "big.txt", Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 1, "a"));
  putIn(ws, "small.txt", "a\n");
  // The session's first whole snapshot (warmSnapshots) has found the big file.
  await snapshotStore(ws).take();
  const note = (names: string) =>
    `Not recorded for /undo (over ${MAX_SNAPSHOT_FILE_BYTES / 1024 / 1024} MB, the snapshot limit): ${names}. Undoing this step leaves it as it is.`;
  // A refused edit: the big file is as it was.
  expect(await editStep(["big.txt", "small.txt"], () => undefined)).toEqual([]);
  // An edit that went through.
  expect(await editStep(["big.txt"], () => appendFileSync(`${ws}/big.txt`, "b"))).toEqual([note("big.txt")]);
  // A new big file written by the step.
  expect(await editStep(["new.txt"], () => putIn(ws, "new.txt", Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 1)))).toEqual([
    note("new.txt"),
  ]);
}, 60_000);
