/** @jest-config-loader esbuild-register */
import type { JestConfigWithTsJest } from "ts-jest";
import base, { SLOW_TEST_FILES, testFilePattern } from "./jest.config";

/**
 * `npm run test:slow`: the files jest.config.ts names in SLOW_TEST_FILES (the real CLI, pseudo-terminals, the
 * Studio dev server, PostgreSQL, processes killed on purpose). A subprocess start costs seconds
 * on a busy machine, so each test gets more room than the fast suite's.
 */
const config: JestConfigWithTsJest = {
  ...base,
  testMatch: undefined,
  testRegex: SLOW_TEST_FILES.map(testFilePattern).map((p) => p.replace("<rootDir>/", "/")),
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/__tests__/e2e/"],
  testTimeout: 90_000,
};

export default config;
