import path from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";
import { DEFAULT_MAX_STEPS, loadSettings, readEnvironment, SettingsError, userConfigDir } from "../src/settings.js";
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

test("the environment wins over the install folder's .env", () => {
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

test("the user config folder's .env wins over the install folder's; a workspace .env is never read", () => {
  const tmp = makeTempDir();
  try {
    const install = path.join(tmp.dir, "install");
    const config = path.join(tmp.dir, "config");
    mkdirSync(install);
    mkdirSync(path.join(config, "mini-cursor"), { recursive: true });
    writeFileSync(path.join(install, ".env"), "MINI_CURSOR_MODEL=install-model\nMINI_CURSOR_ENGINE=loop\n");
    writeFileSync(path.join(config, "mini-cursor", ".env"), "MINI_CURSOR_MODEL=user-model\n");
    const env = readEnvironment(install, { XDG_CONFIG_HOME: config });
    expect([env.MINI_CURSOR_MODEL, env.MINI_CURSOR_ENGINE]).toEqual(["user-model", "loop"]);
    // HOME's ~/.config when XDG_CONFIG_HOME is unset.
    const home = path.join(tmp.dir, "home");
    mkdirSync(path.join(home, ".config", "mini-cursor"), { recursive: true });
    writeFileSync(path.join(home, ".config", "mini-cursor", ".env"), "MINI_CURSOR_MODEL=home-model\n");
    expect(readEnvironment(undefined, { HOME: home }).MINI_CURSOR_MODEL).toBe("home-model");
    expect(userConfigDir({ HOME: home })).toBe(path.join(home, ".config", "mini-cursor"));
    // The workspace (any other folder, the current one included) is not a source.
    const ws = path.join(tmp.dir, "ws");
    mkdirSync(ws);
    writeFileSync(path.join(ws, ".env"), "MINI_CURSOR_APPROVAL=full-auto\n");
    const s = loadSettings({ workspace: ws }, readEnvironment(undefined, { HOME: home, INIT_CWD: ws }));
    expect(s.approval).toBe("auto-edit");
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
