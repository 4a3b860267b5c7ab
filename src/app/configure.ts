import type { StartSlices } from "../contracts/start-slices.js";
import { armFaultPoint } from "../memory/fault-point.js";
import { useStateHome } from "../memory/state-dir.js";
import { useConfigFiles } from "../security/rules.js";
import { startSlices } from "../settings.js";
import { useSnapshotSettings } from "../snapshots/git.js";
import { useCommandEnvironment } from "../workspace/processes.js";

/**
 * Hands each part its slice of the settings, once, at start: the state home, the snapshots',
 * the environment commands get, the person's config files and the fault tests' hook. The CLI
 * and Studio call it before any work; so do the test setup and any script that uses the parts
 * directly. A test that changes one gives new slices here again.
 */
export function configureParts(slices: StartSlices = startSlices()): void {
  useStateHome(slices.stateHome);
  useSnapshotSettings(slices.snapshots);
  useCommandEnvironment(slices.commands);
  useConfigFiles(slices.configFiles);
  armFaultPoint(slices.faultPoint);
}
