import { detectBubblewrap } from "../../src/security/sandbox.js";

/**
 * Fails the suite with what to install when bubblewrap is missing: CI installs it (.ci/run), so a
 * silent skip would hide that the sandbox was never tested.
 */
export function requireBubblewrap(): void {
  const status = detectBubblewrap();
  if (!status.available)
    throw new Error(`These tests need bubblewrap, but ${status.problem}. Install it: apt-get install -y bubblewrap`);
}
