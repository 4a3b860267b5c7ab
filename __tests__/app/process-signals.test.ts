import { sessionSignals, STOP_SIGNALS } from "../../src/app/process-signals.js";

test("the session's signal policy: Ctrl-C interrupts, SIGTERM and SIGHUP leave, a relayed repeat is ignored", () => {
  const before = STOP_SIGNALS.map((s) => process.listenerCount(s));
  const calls: string[] = [];
  const off = sessionSignals({ interrupt: () => calls.push("interrupt"), leave: (why) => calls.push(`leave ${why}`) });
  try {
    // Emitted in-process (no real signal): the second SIGINT comes within REPEATED_SIGNAL_MS.
    process.emit("SIGINT", "SIGINT");
    process.emit("SIGINT", "SIGINT");
    process.emit("SIGTERM", "SIGTERM");
    process.emit("SIGHUP", "SIGHUP");
  } finally {
    off();
  }
  expect(calls).toEqual(["interrupt", "leave SIGTERM", "leave SIGHUP"]);
  expect(STOP_SIGNALS.map((s) => process.listenerCount(s))).toEqual(before);
});
