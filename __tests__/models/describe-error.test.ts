import { expect, test } from "@jest/globals";
import { describeModelError, type ModelSettings } from "../../src/models/model.js";
import { IncompleteResponseError } from "../../src/models/invoke.js";
import { StateError } from "../../src/memory/state-errors.js";
import { StateDirError } from "../../src/memory/state-dir.js";

/** What a failed run says, for failures that are not the provider's, and for a wire that broke. */

const settings = {
  model: "m",
  baseUrl: "http://127.0.0.1:9/v1",
  requestTimeoutMs: 60_000,
  maxRetries: 4,
} as ModelSettings;

const fsError = (code: string, message: string) =>
  Object.assign(new Error(message), { code, errno: -28, syscall: "write" });

test("a failure of this machine is never the model provider's", () => {
  expect(describeModelError(fsError("ENOSPC", "ENOSPC: no space left on device, write"), settings)).toBe(
    "The run failed on this machine, not at the model provider: ENOSPC: no space left on device, write (ENOSPC). The disk is full: free some space (df -h shows where) and run again.",
  );
  const wrapped = Object.assign(new Error("write failed"), { cause: fsError("EMFILE", "EMFILE: too many open files") });
  expect(describeModelError(wrapped, settings)).toContain("(EMFILE). Too many files are open: raise the limit");
  expect(describeModelError(wrapped, settings)).not.toMatch(/Could not reach|OPENAI_BASE_URL/);
});

test("state errors, the state folder's included, are said as they are", () => {
  expect(describeModelError(new StateError("The disk is full: …", "ENOSPC"), settings)).toBe("The disk is full: …");
  const dir = new StateDirError("cannot create mini-cursor's state folder /s: the disk is full. Make it writable, …");
  expect(dir).toBeInstanceOf(StateError);
  expect(describeModelError(dir, settings)).toBe(dir.message);
});

test("an error of unknown origin is the run's, not the model request's", () => {
  expect(describeModelError(new Error("boom\nat somewhere"), settings)).toBe("The run failed: boom");
});

test("a connection that was made and lost is not an unreachable provider", () => {
  const socket = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
  const midway = Object.assign(new TypeError("terminated"), { cause: socket });
  expect(describeModelError(midway, settings)).toBe(
    "The model provider at http://127.0.0.1:9/v1 answered, but the connection closed before its response ended (UND_ERR_SOCKET: other side closed). It is reachable, so OPENAI_BASE_URL is right: try again, and if it keeps happening, check the server's logs, or a proxy between that cuts long responses.",
  );
  const unanswered = Object.assign(new Error("Connection error."), { cause: midway });
  expect(describeModelError(unanswered, settings)).toMatch(
    /^The model provider at http:\/\/127\.0\.0\.1:9\/v1 accepted the connection but closed it before answering \(UND_ERR_SOCKET: other side closed\)\./,
  );
  expect(describeModelError(new IncompleteResponseError("ended early"), settings)).toMatch(
    /^The model provider at \S+ answered, but its response ended before it was complete \(no finish_reason\)\. /,
  );
});
