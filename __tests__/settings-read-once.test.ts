import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  captureEnvironment,
  childEnvironment,
  processEnvironment,
  snapshotWatchEnabled,
  startSlices,
} from "../src/settings.js";

/**
 * The environment is read once, when settings.ts loads (captureEnvironment): what a run sees is
 * the environment it started with, whatever changes process.env later (a library, a tool of the
 * process, LangChain). Only a new capture, which tests make, sees a change.
 */
test("a change to process.env after start is not seen until the environment is captured again", () => {
  const saved = { ...process.env };
  try {
    process.env.MINI_CURSOR_SNAPSHOT_WATCH = "off";
    process.env.MINI_CURSOR_READ_ONCE_PROBE = "late";
    expect(processEnvironment().MINI_CURSOR_READ_ONCE_PROBE).toBeUndefined();
    expect(childEnvironment().MINI_CURSOR_READ_ONCE_PROBE).toBeUndefined();
    expect(snapshotWatchEnabled()).toBe(true);
    captureEnvironment();
    expect(processEnvironment().MINI_CURSOR_READ_ONCE_PROBE).toBe("late");
    expect(childEnvironment().MINI_CURSOR_READ_ONCE_PROBE).toBe("late");
    expect(snapshotWatchEnabled()).toBe(false);
    // The captured copy is a copy: writing to it does not change the process's, nor the reverse.
    process.env.MINI_CURSOR_READ_ONCE_PROBE = "later";
    expect(processEnvironment().MINI_CURSOR_READ_ONCE_PROBE).toBe("late");
  } finally {
    process.env = saved;
    captureEnvironment();
  }
  expect(processEnvironment().MINI_CURSOR_READ_ONCE_PROBE).toBeUndefined();
});

test("the parts' slices take their settings from the .env files as every setting does, and commands only the process's environment", () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "slices-"));
  try {
    mkdirSync(path.join(tmp, "mini-cursor"));
    writeFileSync(
      path.join(tmp, "mini-cursor", ".env"),
      `MINI_CURSOR_STATE_HOME=${path.join(tmp, "state")}\nMINI_CURSOR_SNAPSHOTS=off\nFROM_DOTENV=1\n`,
    );
    const slices = startSlices({ XDG_CONFIG_HOME: tmp, HOME: tmp, PATH: "/usr/bin" });
    expect(slices.stateHome).toBe(path.join(tmp, "state"));
    expect(slices.snapshots.enabled).toBe(false);
    expect(slices.commands.base.FROM_DOTENV).toBeUndefined();
    // The environment wins over a .env, as for every setting.
    const overridden = startSlices({ XDG_CONFIG_HOME: tmp, HOME: tmp, MINI_CURSOR_STATE_HOME: path.join(tmp, "env") });
    expect(overridden.stateHome).toBe(path.join(tmp, "env"));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
