import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "@jest/globals";
import { configureParts } from "../../src/app/configure.js";
import { captureEnvironment } from "../../src/settings.js";

/**
 * Every test file gets its own state home (XDG_STATE_HOME, which the CLIs it starts inherit
 * through baseEnv), so no test writes into the developer's ~/.local/state, and none sees
 * another's threads. Removed when the file's tests end.
 */
const home = mkdtempSync(path.join(os.tmpdir(), "mc-state-home-"));
process.env.XDG_STATE_HOME = home;
delete process.env.MINI_CURSOR_STATE_HOME;
// As the CLI does at start: the environment read once, and each part handed its slice of it.
captureEnvironment();
configureParts();

afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});
