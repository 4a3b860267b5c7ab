import { stateDirPath } from "../../src/memory/state-dir.js";

/** A workspace's private state folder as the code under test computes it (the test file's state home). */
export function stateDirOf(workspace: string): string {
  return stateDirPath(workspace);
}
