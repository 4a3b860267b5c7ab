import { configureParts } from "../../src/app/configure.js";
import { captureEnvironment } from "../../src/settings.js";

/** What a new start does after a test changed process.env: read it once again, and hand each part its slice. */
export function restartSettings(): void {
  captureEnvironment();
  configureParts();
}
