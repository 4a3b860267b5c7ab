import { restartSettings } from "../helpers/start.js";
import { executeCommand } from "../../src/tools/execute-command.js";
import { createToolContext } from "../../src/tools/context.js";
import { isSecretName, parsePassEnv, redactSecrets, scrubEnvironment } from "../../src/security/env.js";
import { childEnvironment, loadSettings, SettingsError } from "../../src/settings.js";
import { createProcessRegistry } from "../../src/workspace/processes.js";
import { makeTempDir } from "../helpers/tmp.js";

const USER_ENV = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/me",
  LANG: "C.UTF-8",
  SSH_AUTH_SOCK: "/run/ssh.sock",
  OPENAI_API_KEY: "sk-openai-secret-value",
  OPENAI_BASE_URL: "https://api.example.com/v1",
  ANTHROPIC_API_KEY: "sk-ant-secret",
  GITHUB_TOKEN: "ghp_secret",
  GH_TOKEN: "gho_secret",
  AWS_ACCESS_KEY_ID: "AKIA...",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  AWS_SESSION_TOKEN: "aws-session",
  NPM_TOKEN: "npm-secret",
  npm_config__authToken: "npm-auth",
  DB_PASSWORD: "hunter2",
  MYSQL_PWD_PASSWD: "x",
  GOOGLE_APPLICATION_CREDENTIALS: "/home/me/gcp.json",
  SECRET_SAUCE: "x",
  apikey: "lower",
  NODE_ENV: "development",
  PWD: "/home/me/project",
  TERM: "xterm",
};

test.each([
  ["OPENAI_API_KEY", true],
  ["ANTHROPIC_API_KEY", true],
  ["GITHUB_TOKEN", true],
  ["AWS_SECRET_ACCESS_KEY", true],
  ["AWS_SESSION_TOKEN", true],
  ["DB_PASSWORD", true],
  ["db_passwd", true],
  ["GOOGLE_APPLICATION_CREDENTIALS", true],
  ["my_secret", true],
  ["apikey", true],
  ["PATH", false],
  ["HOME", false],
  ["PWD", false],
  ["SSH_AUTH_SOCK", true], // not secret-looking, but always scrubbed: the agent signs with every key
  ["OPENAI_BASE_URL", false],
  ["NODE_ENV", false],
])("%s looks secret: %s", (name, secret) => {
  expect(isSecretName(name)).toBe(secret);
});

test("the scrub keeps the user's environment without credentials, and names what it removed", () => {
  const { env, removed } = scrubEnvironment(USER_ENV);
  expect(env).toEqual({
    PATH: "/usr/bin:/bin",
    HOME: "/home/me",
    LANG: "C.UTF-8",
    OPENAI_BASE_URL: "https://api.example.com/v1",
    NODE_ENV: "development",
    PWD: "/home/me/project",
    TERM: "xterm",
  });
  expect(removed).toEqual([
    "ANTHROPIC_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "DB_PASSWORD",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "MYSQL_PWD_PASSWD",
    "NPM_TOKEN",
    "OPENAI_API_KEY",
    "SECRET_SAUCE",
    "SSH_AUTH_SOCK",
    "apikey",
    "npm_config__authToken",
  ]);
});

test("variables listed to pass through are kept, even the API key", () => {
  const { env } = scrubEnvironment(USER_ENV, ["NPM_TOKEN", "OPENAI_API_KEY"]);
  expect(env.NPM_TOKEN).toBe("npm-secret");
  expect(env.OPENAI_API_KEY).toBe("sk-openai-secret-value");
  expect(env.GITHUB_TOKEN).toBeUndefined();
});

test("MINI_CURSOR_PASS_ENV is a comma or space separated list", () => {
  expect(parsePassEnv("A,B  C, D")).toEqual(["A", "B", "C", "D"]);
  expect(parsePassEnv(undefined)).toEqual([]);
  expect(loadSettings({}, { MINI_CURSOR_PASS_ENV: "NPM_TOKEN,GH_TOKEN" }).passEnv).toEqual(["NPM_TOKEN", "GH_TOKEN"]);
  expect(childEnvironment(["GH_TOKEN"], USER_ENV)).toEqual({
    ...scrubEnvironment(USER_ENV).env,
    GH_TOKEN: "gho_secret",
  });
});

test("settings: --sandbox and --no-network, with the environment as fallback", () => {
  expect(loadSettings({}, {})).toMatchObject({ sandbox: "auto", network: true, passEnv: [] });
  expect(loadSettings({ sandbox: "off" }, { MINI_CURSOR_SANDBOX: "on" }).sandbox).toBe("off");
  expect(loadSettings({}, { MINI_CURSOR_SANDBOX: "on" }).sandbox).toBe("on");
  expect(() => loadSettings({ sandbox: "maybe" }, {})).toThrow(/sandbox/);
  expect(loadSettings({ network: false }, {}).network).toBe(false);
  expect(loadSettings({ network: true }, { MINI_CURSOR_NETWORK: "off" }).network).toBe(false);
  expect(loadSettings({}, { MINI_CURSOR_NETWORK: "0" }).network).toBe(false);
  expect(() => loadSettings({}, { MINI_CURSOR_NETWORK: "sometimes" })).toThrow(SettingsError);
});

test("redaction replaces secret values wherever they appear", () => {
  expect(redactSecrets("key=sk-openai-secret-value; again sk-openai-secret-value", ["sk-openai-secret-value"])).toBe(
    "key=[redacted]; again [redacted]",
  );
  expect(redactSecrets("short abc", ["abc"])).toBe("short abc");
});

describe("execute_command", () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
  });
  afterEach(() => tmp.cleanup());

  test("a command sees no credentials from the environment it was given", async () => {
    const ctx = createToolContext(
      { workspace: tmp.dir, env: childEnvironment([], { ...USER_ENV, PATH: process.env.PATH }) },
      createProcessRegistry(),
    );
    const out = await executeCommand(ctx, {
      command: 'echo "key=[$OPENAI_API_KEY] gh=[$GITHUB_TOKEN] aws=[$AWS_SECRET_ACCESS_KEY]"; env | sort',
    });
    expect(out).toContain("key=[] gh=[] aws=[]");
    for (const value of ["sk-openai-secret-value", "ghp_secret", "aws-secret", "hunter2", "npm-secret"])
      expect(out).not.toContain(value);
    expect(out).not.toContain("SSH_AUTH_SOCK");
  });

  test("without an explicit environment, commands get the scrubbed process environment", async () => {
    const saved = process.env.MINI_CURSOR_TEST_TOKEN;
    process.env.MINI_CURSOR_TEST_TOKEN = "tok-should-not-leak";
    restartSettings();
    try {
      const ctx = createToolContext({ workspace: tmp.dir }, createProcessRegistry());
      const out = await executeCommand(ctx, { command: 'echo "[$MINI_CURSOR_TEST_TOKEN]"' });
      expect(out).toBe("Exit code: 0\n[]");
    } finally {
      if (saved === undefined) delete process.env.MINI_CURSOR_TEST_TOKEN;
      else process.env.MINI_CURSOR_TEST_TOKEN = saved;
      restartSettings();
    }
  });

  test("the API key is redacted from what the model reads, even when a file holds it", async () => {
    const key = "sk-test-0123456789abcdef";
    const chunks: string[] = [];
    const ctx = createToolContext(
      { workspace: tmp.dir, env: { PATH: process.env.PATH }, redact: [key], onOutput: (c) => chunks.push(c.text) },
      createProcessRegistry(),
    );
    const out = await executeCommand(ctx, { command: `echo "OPENAI_API_KEY=${key}" > .env && cat .env` });
    expect(out).toBe("Exit code: 0\nOPENAI_API_KEY=[redacted]");
    expect(chunks.join("")).not.toContain(key);
  });
});

describe("variables npm sets for its own run of mini-cursor", () => {
  test("are not passed to commands", async () => {
    const { withoutNpmRunVariables } = await import("../../src/security/env.js");
    const env = {
      PATH: "/usr/bin",
      INIT_CWD: "/home/me/project",
      NODE_OPTIONS: "--experimental-vm-modules",
      npm_config_node_options: "--experimental-vm-modules",
      npm_config_loglevel: "silent",
      npm_config_local_prefix: "/opt/mini-cursor",
      npm_config_registry: "https://registry.example/",
      npm_lifecycle_event: "start",
      npm_lifecycle_script: "node scripts/start.mjs",
      npm_package_name: "mini-cursor",
      npm_execpath: "/usr/lib/node_modules/npm/bin/npm-cli.js",
    };
    expect(withoutNpmRunVariables(env)).toEqual({ PATH: "/usr/bin", npm_config_registry: "https://registry.example/" });
  });

  test("are left alone when mini-cursor was not started by npm", async () => {
    const { withoutNpmRunVariables } = await import("../../src/security/env.js");
    const env = { NODE_OPTIONS: "--max-old-space-size=4096", INIT_CWD: "/x" };
    expect(withoutNpmRunVariables(env)).toEqual(env);
  });
});
