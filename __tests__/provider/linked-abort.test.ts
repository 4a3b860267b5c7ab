import { getEventListeners } from "node:events";
import { linkedAbort } from "../../src/provider/linked-abort.js";

/**
 * linkedAbort replaces AbortSignal.any for each model call (issue 30): it must follow its
 * sources as AbortSignal.any does, and leave no listener on a long-lived source (the run's
 * signal) once disposed, so no call is kept in memory by the run.
 */

test("follows whichever source aborts first, with its reason, and then lets go of the others", () => {
  const run = new AbortController();
  const request = new AbortController();
  const link = linkedAbort([run.signal, undefined, request.signal]);
  expect(link.signal.aborted).toBe(false);
  expect(getEventListeners(run.signal, "abort")).toHaveLength(1);
  request.abort(new Error("cancelled"));
  expect(link.signal.aborted).toBe(true);
  expect((link.signal.reason as Error).message).toBe("cancelled");
  expect(getEventListeners(run.signal, "abort")).toHaveLength(0);
  expect(getEventListeners(request.signal, "abort")).toHaveLength(0);
});

test("a source aborted already aborts it at once, and hooks nothing", () => {
  const done = new AbortController();
  done.abort("before");
  const run = new AbortController();
  const link = linkedAbort([run.signal, done.signal]);
  expect(link.signal.aborted).toBe(true);
  expect(link.signal.reason).toBe("before");
  expect(getEventListeners(run.signal, "abort")).toHaveLength(0);
});

test("abort() ends only the linked signal; dispose() unhooks it from the sources", () => {
  const run = new AbortController();
  const first = linkedAbort([run.signal]);
  first.abort("idle");
  expect(first.signal.aborted).toBe(true);
  expect(run.signal.aborted).toBe(false);
  expect(getEventListeners(run.signal, "abort")).toHaveLength(0);

  const calls = Array.from({ length: 50 }, () => linkedAbort([run.signal]));
  expect(getEventListeners(run.signal, "abort")).toHaveLength(50);
  for (const call of calls) call.dispose();
  expect(getEventListeners(run.signal, "abort")).toHaveLength(0);
  run.abort();
  expect(calls.every((c) => !c.signal.aborted)).toBe(true);
});
