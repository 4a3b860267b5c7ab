/** @jest-config-loader esbuild-register */
import { existsSync } from "node:fs";
import path from "node:path";
import { createDefaultEsmPreset, type JestConfigWithTsJest } from "ts-jest";

/**
 * The slow test files: they drive the real CLI as a subprocess, a pseudo-terminal, the Studio dev
 * server or a PostgreSQL cluster, or kill processes on purpose, and each takes ten seconds or more
 * on a quiet 2-core machine. `npm test` leaves them out so that it stays a few minutes even on a
 * busy machine; `npm run test:slow` runs exactly these, and `.ci/run` runs both. Paths are relative
 * to __tests__/. A file named here that does not exist fails both configurations, so the list
 * cannot rot silently.
 */
export const SLOW_TEST_FILES: readonly string[] = [
  "agent/parallel-commands.test.ts",
  "app/config-trust.test.ts",
  "app/mcp-names.test.ts",
  "app/mcp.test.ts",
  "app/tracing.test.ts",
  "app/warm-up.test.ts",
  "app/undo.test.ts",
  "approve-edit-pty.test.ts",
  "cli-edits.test.ts",
  "cli-hints.test.ts",
  "cli-mixups.test.ts",
  "cli-provider.test.ts",
  "cli-subagent-streams.test.ts",
  "cli-subagents.test.ts",
  "claude-compat-cli.test.ts",
  "claude-compat-pty.test.ts",
  "cli-state-waits.test.ts",
  "cli-stdin.test.ts",
  "cli-waits.test.ts",
  "cli.test.ts",
  "custom-commands-cli.test.ts",
  "custom-commands-pty.test.ts",
  "context/compaction-converges.test.ts",
  "engines.test.ts",
  "eval.test.ts",
  "faults/clock.test.ts",
  "faults/big-output.test.ts",
  "faults/full-disk.test.ts",
  "faults/kill-points.test.ts",
  "faults/lock-lost.test.ts",
  "faults/provider-faults.test.ts",
  "faults/provider-silence.test.ts",
  "faults/shutdown.test.ts",
  "faults/snapshot-import-kill.test.ts",
  "faults/snapshot-kill.test.ts",
  "faults/snapshot-store.test.ts",
  "faults/state-errors.test.ts",
  "faults/subagent-kill.test.ts",
  "faults/undo-lost.test.ts",
  "faults/writers.test.ts",
  "faults/zombie-holder.test.ts",
  "habits-cli.test.ts",
  "history-pty.test.ts",
  "hooks-cli.test.ts",
  "hooks-claude-cli.test.ts",
  "interrupt.test.ts",
  "lock-lost-pty.test.ts",
  "mcp-list-pty.test.ts",
  "narrow-pty.test.ts",
  "mcp/mcp-offline.test.ts",
  "mcp/mcp-paths.test.ts",
  "mcp/stop-race.test.ts",
  "memory-backends.test.ts",
  "memory/compact-saver.test.ts",
  "memory/legacy-state.test.ts",
  "memory/stored-after-compaction.test.ts",
  "models/model-http.test.ts",
  "models/replay.test.ts",
  "offline-plan.test.ts",
  "plan-mode-pty.test.ts",
  "policy/approval.test.ts",
  "policy/effects.test.ts",
  "policy/plan-mode.test.ts",
  "provider-cli.test.ts",
  "provider/conformance-requests.test.ts",
  "provider/conformance-tool-calls.test.ts",
  "provider/waits.test.ts",
  "pty.test.ts",
  "repl.test.ts",
  "scripts-usage.test.ts",
  "security/canary.test.ts",
  "security/cli.test.ts",
  "security/fifo-files.test.ts",
  "security/hook-scripts-cli.test.ts",
  "security/git-read-only.test.ts",
  "security/orphans.test.ts",
  "security/other-users.test.ts",
  "security/output-gate-cli.test.ts",
  "security/patch-delete-race.test.ts",
  "security/races.test.ts",
  "security/rules-guard.test.ts",
  "security/secrets.test.ts",
  "security/state-outside.test.ts",
  "settings-sources.test.ts",
  "snapshot-wait-cli.test.ts",
  "studio.test.ts",
  "studio/approve-edit.test.ts",
  "studio/codes.test.ts",
  "studio/hooks.test.ts",
  "studio/killed-server.test.ts",
  "studio/subagents.test.ts",
  "studio/lock-lost.test.ts",
  "studio/resume-mode.test.ts",
  "subagent-interrupt-pty.test.ts",
  "subagent-pty.test.ts",
  "tool-arguments-cli.test.ts",
  "tools/apply-patch-big.test.ts",
  "tools/big-files.test.ts",
  "tools/todos.test.ts",
  "undo-cli.test.ts",
  "waits-pty.test.ts",
  "workspace/process-spawner.test.ts",
  "workspace/process-spawner-background.test.ts",
  "workspace/processes.test.ts",
  "snapshots/store-faults.test.ts",
  "snapshots/store-incremental.test.ts",
  "snapshots/watch.test.ts",
];

const missing = SLOW_TEST_FILES.filter((f) => !existsSync(path.join(__dirname, "__tests__", f)));
if (missing.length > 0) throw new Error(`jest.slow-tests.ts names test files that do not exist: ${missing.join(", ")}`);

/** A path pattern that matches exactly this test file under __tests__/. */
export const testFilePattern = (file: string): string =>
  `<rootDir>/__tests__/${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;

const config: JestConfigWithTsJest = {
  ...createDefaultEsmPreset(),
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  // End-to-end tests need the npm registry and take minutes: `npm run test:e2e` runs them. The
  // slow files (jest.slow-tests.ts) are `npm run test:slow`'s.
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/__tests__/e2e/", ...SLOW_TEST_FILES.map(testFilePattern)],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: 30_000,
  // Each test file keeps its state (threads, snapshots) in a temp state home of its own.
  setupFilesAfterEnv: ["<rootDir>/__tests__/helpers/state-home.ts"],
};

export default config;
