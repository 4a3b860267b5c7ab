import path from "node:path";
import { writeFileSync } from "node:fs";
import { DEFAULT_MAX_STEPS, loadSettings, readEnvironment, SettingsError } from "../src/settings.js";
import { makeTempDir } from "./helpers/tmp.js";

test("no key and no base URL means the offline model", () => {
  const s = loadSettings({}, { INIT_CWD: "/tmp" });
  expect(s.provider).toBe("offline");
  expect(s.workspace).toBe("/tmp");
  expect(s.maxSteps).toBe(DEFAULT_MAX_STEPS);
  expect(s.approval).toBe("auto-edit");
});

test("a base URL without a key is a provider (local servers)", () => {
  const s = loadSettings({}, { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" });
  expect(s.provider).toBe("openai-compatible");
  expect(s.apiKey).toBeUndefined();
});

test("flags beat the environment", () => {
  const s = loadSettings(
    { model: "flag-model", approval: "suggest", maxSteps: "7" },
    { MINI_CURSOR_MODEL: "env-model", MINI_CURSOR_APPROVAL: "full-auto" },
  );
  expect([s.model, s.approval, s.maxSteps]).toEqual(["flag-model", "suggest", 7]);
});

test("bad values are usage errors with a clear message", () => {
  expect(() => loadSettings({ maxSteps: "ten" }, {})).toThrow(SettingsError);
  expect(() => loadSettings({ maxSteps: "ten" }, {})).toThrow("--max-steps must be a whole number");
  expect(() => loadSettings({ approval: "yolo" }, {})).toThrow(/approval/);
  expect(() => loadSettings({}, { OPENAI_BASE_URL: "not a url" })).toThrow(/OPENAI_BASE_URL/);
});

test("the environment wins over .env", () => {
  const tmp = makeTempDir();
  try {
    writeFileSync(path.join(tmp.dir, ".env"), "OPENAI_API_KEY=from-file\nMINI_CURSOR_MODEL=file-model\n");
    const env = readEnvironment(tmp.dir, { MINI_CURSOR_MODEL: "env-model" });
    expect(env.OPENAI_API_KEY).toBe("from-file");
    expect(env.MINI_CURSOR_MODEL).toBe("env-model");
  } finally {
    tmp.cleanup();
  }
});

test("NO_COLOR turns colour off", () => {
  expect(loadSettings({}, { NO_COLOR: "1" }).color).toBe(false);
  expect(loadSettings({ color: false }, {}).color).toBe(false);
  expect(loadSettings({}, {}).color).toBe(true);
});

test("MINI_CURSOR_DOTENV=off ignores .env (tests use it)", () => {
  const tmp = makeTempDir();
  try {
    writeFileSync(path.join(tmp.dir, ".env"), "OPENAI_API_KEY=from-file\n");
    expect(readEnvironment(tmp.dir, { MINI_CURSOR_DOTENV: "off" }).OPENAI_API_KEY).toBeUndefined();
  } finally {
    tmp.cleanup();
  }
});
