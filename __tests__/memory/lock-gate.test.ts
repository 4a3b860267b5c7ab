import { lockGate } from "../../src/memory/lock-gate.js";
import type { ThreadLock, ThreadLocker } from "../../src/memory/thread-lock.js";

/** A locker whose locks the test can make lost, as a PostgreSQL lock is when its connection ends. */
function losableLocker() {
  const lose: Array<(err: Error) => void> = [];
  const locker: ThreadLocker = {
    async tryLock(threadId) {
      const listeners: Array<(err: Error) => void> = [];
      lose.push((err) => listeners.forEach((l) => l(err)));
      const lock: ThreadLock = {
        threadId,
        release: async () => undefined,
        onLost: (listener) => {
          listeners.push(listener);
          return () => undefined;
        },
      };
      return { lock };
    },
  };
  return { locker, loseLatest: (err: Error) => lose.at(-1)!(err) };
}

test("a thread whose lock was lost refuses its writes with that error; other threads and a retaken lock write", async () => {
  const { locker, loseLatest } = losableLocker();
  const gate = lockGate(locker);
  await gate.locker.tryLock("other");
  await gate.locker.tryLock("t1");
  expect(() => gate.check("t1")).not.toThrow();
  const lost = new Error("Lost the lock on thread t1");
  loseLatest(lost);
  expect(() => gate.check("t1")).toThrow(lost);
  expect(() => gate.check("other")).not.toThrow();
  expect(() => gate.check(undefined)).not.toThrow();
  // Taking the thread again (nobody else had it) opens the gate.
  await gate.locker.tryLock("t1");
  expect(() => gate.check("t1")).not.toThrow();
});
