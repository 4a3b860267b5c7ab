/** @jest-config-loader esbuild-register */
import type { JestConfigWithTsJest } from "ts-jest";
import base from "./jest.config";

/**
 * `npm run test:e2e`: the end-to-end tests under __tests__/e2e (real npm installs and dev
 * servers; they need the npm registry and take minutes), one file at a time.
 */
const config: JestConfigWithTsJest = {
  ...base,
  roots: ["<rootDir>/__tests__/e2e"],
  testPathIgnorePatterns: ["/node_modules/"],
  testTimeout: 600_000,
  maxWorkers: 1,
};

export default config;
