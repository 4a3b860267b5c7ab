/** @jest-config-loader esbuild-register */
import { createDefaultEsmPreset, type JestConfigWithTsJest } from "ts-jest";

const config: JestConfigWithTsJest = {
  ...createDefaultEsmPreset(),
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  // End-to-end tests need the npm registry and take minutes: `npm run test:e2e` runs them.
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/__tests__/e2e/"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: 30_000,
  // Each test file keeps its state (threads, snapshots) in a temp state home of its own.
  setupFilesAfterEnv: ["<rootDir>/__tests__/helpers/state-home.ts"],
};

export default config;
