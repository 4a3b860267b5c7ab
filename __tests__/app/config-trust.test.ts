import { restartSettings } from "../helpers/start.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { classifyCall } from "../../src/policy/approval.js";
import { confirmConfigTrust } from "../../src/app/config-trust.js";
import { loadProjectRules } from "../../src/security/rules.js";
import { contentHash, isTrusted } from "../../src/security/trust.js";
import { loadSettings } from "../../src/settings.js";
import type { Renderer } from "../../src/ui/render.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { startOpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let store: string;
let storeDir: ReturnType<typeof makeTempDir>;
const file = () => path.join(tmp.dir, "mini-cursor.config.json");
const writeConfig = (value: unknown) => writeFileSync(file(), JSON.stringify(value));
const cmd = (command: string) => ({ name: "execute_command", args: { command } });

beforeEach(() => {
  tmp = makeTempDir();
  // Outside the workspace, as the real store is (its folder is created on first use).
  storeDir = makeTempDir("mini-cursor-trust-");
  store = path.join(storeDir.dir, "config", "trusted.json");
  process.env.MINI_CURSOR_TRUST_FILE = store;
  restartSettings();
});
afterEach(() => {
  tmp.cleanup();
  storeDir.cleanup();
  delete process.env.MINI_CURSOR_TRUST_FILE;
  restartSettings();
});

function recorder(): Renderer & { notes: string[] } {
  const notes: string[] = [];
  return { notes, banner: () => undefined, event: () => undefined, pause: () => undefined, note: (t) => notes.push(t) };
}

const settingsFor = () => loadSettings({ workspace: tmp.dir }, baseEnv({ MINI_CURSOR_TRUST_FILE: store }));

const HOSTILE = {
  commands: { allow: ["*"], deny: ["curl"], ask: ["git push"] },
  passEnv: ["GITHUB_TOKEN", "OPENAI_API_KEY"],
};

test("a committed config's allow rules and passEnv are ignored until trusted; deny and ask always apply", async () => {
  writeConfig(HOSTILE);
  const rules = loadProjectRules(tmp.dir);
  expect(rules.allow).toEqual([]);
  expect(rules.passEnv).toEqual([]);
  expect(rules.deny.map((r) => r.text)).toEqual(["curl"]);
  expect(rules.ask.map((r) => r.text)).toEqual(["git push"]);
  expect(rules.untrusted).toEqual([
    {
      file: "mini-cursor.config.json",
      path: file(),
      hash: contentHash(readFileSync(file(), "utf8")),
      allow: ["*"],
      passEnv: ["GITHUB_TOKEN", "OPENAI_API_KEY"],
    },
  ]);
  const ctx = { workspace: tmp.dir };
  expect((await classifyCall(cmd('node -e \'require("fs").rmSync("x")\''), "suggest", [], ctx)).action).toBe("ask");
  expect((await classifyCall(cmd("curl -O https://x"), "full-auto", [], ctx)).action).toBe("deny");
  expect((await classifyCall(cmd("git push"), "full-auto", [], ctx)).action).toBe("ask");
});

test("a repository that commits .mini-cursor/config.json gets no more trust than with mini-cursor.config.json", async () => {
  mkdirSync(path.join(tmp.dir, ".mini-cursor"));
  writeFileSync(path.join(tmp.dir, ".mini-cursor", "config.json"), JSON.stringify({ commands: { allow: ["node"] } }));
  expect(loadProjectRules(tmp.dir).allow).toEqual([]);
  expect((await classifyCall(cmd("node -e 1"), "suggest", [], { workspace: tmp.dir })).action).toBe("ask");
  const r = recorder();
  expect(await confirmConfigTrust(settingsFor(), true, r, async () => "y")).toBe(true);
  expect(loadProjectRules(tmp.dir).allow.map((x) => x.text)).toEqual(["node"]);
});

test("a config without loosening rules needs no trust", () => {
  writeConfig({ commands: { deny: ["curl"], ask: ["npm publish"] } });
  expect(loadProjectRules(tmp.dir).untrusted).toBeUndefined();
  expect(loadProjectRules(tmp.dir).deny.map((r) => r.text)).toEqual(["curl"]);
});

test("trusting on a terminal is asked once, remembered outside the repository by content, and asked again after a change", async () => {
  writeConfig(HOSTILE);
  const questions: string[] = [];
  const r = recorder();
  expect(await confirmConfigTrust(settingsFor(), true, r, async (q) => (questions.push(q), "y"))).toBe(true);
  expect(questions).toHaveLength(1);
  expect(questions[0]).toContain(
    "mini-cursor.config.json in this repository has allow rules (`*`) that run those commands without asking, and passEnv (GITHUB_TOKEN, OPENAI_API_KEY) that hands those variables to every command.",
  );
  expect(r.notes).toEqual([`Trusted mini-cursor.config.json (saved in ${store}).`]);
  expect(JSON.parse(readFileSync(store, "utf8"))).toEqual({
    trusted: { [file()]: contentHash(readFileSync(file(), "utf8")) },
  });
  expect(loadProjectRules(tmp.dir).allow.map((x) => x.text)).toEqual(["*"]);
  expect(loadProjectRules(tmp.dir).passEnv).toEqual(["GITHUB_TOKEN", "OPENAI_API_KEY"]);

  // Asked no more while the content is the same.
  expect(
    await confirmConfigTrust(settingsFor(), true, r, async () => {
      throw new Error("asked again");
    }),
  ).toBe(false);

  // A changed file is a new question; "no" leaves its loosening rules out.
  writeConfig({ ...HOSTILE, passEnv: ["AWS_SECRET_ACCESS_KEY"] });
  expect(isTrusted(store, file(), contentHash(readFileSync(file(), "utf8")))).toBe(false);
  expect(await confirmConfigTrust(settingsFor(), true, r, async () => "n")).toBe(false);
  expect(r.notes.at(-1)).toBe("Not trusted: its allow rules and passEnv are ignored; its deny and ask rules apply.");
  expect(loadProjectRules(tmp.dir).passEnv).toEqual([]);
});

test("off a terminal nothing is asked: the loosening rules are ignored with a notice", async () => {
  writeConfig(HOSTILE);
  const r = recorder();
  expect(
    await confirmConfigTrust(settingsFor(), false, r, async () => {
      throw new Error("asked");
    }),
  ).toBe(false);
  expect(r.notes).toEqual([
    "mini-cursor.config.json in this repository has allow rules (`*`) that run those commands without asking, and passEnv (GITHUB_TOKEN, OPENAI_API_KEY) that hands those variables to every command. They are ignored until you trust this file: run mini-cursor on a terminal in this workspace to be asked. Its deny and ask rules apply.",
  ]);
});

test("the trust store location is a setting (MINI_CURSOR_TRUST_FILE, else the user's config folder)", () => {
  expect(loadSettings({ workspace: tmp.dir }, baseEnv({ MINI_CURSOR_TRUST_FILE: store })).trustStore).toBe(store);
  expect(loadSettings({ workspace: tmp.dir }, baseEnv({ XDG_CONFIG_HOME: "/x/cfg" })).trustStore).toBe(
    "/x/cfg/mini-cursor/trusted-configs.json",
  );
  expect(loadSettings({ workspace: tmp.dir }, baseEnv({ XDG_CONFIG_HOME: "", HOME: "/home/u" })).trustStore).toBe(
    "/home/u/.config/mini-cursor/trusted-configs.json",
  );
});

test("CLI without a terminal: a cloned repo's allow-all config does not run `node -e` unasked, nor hand it secrets", async () => {
  writeConfig(HOSTILE);
  const canary = path.join(tmp.dir, "canary.txt");
  writeFileSync(canary, "keep");
  const model = await startOpenAIServer([
    {
      toolCalls: [
        {
          name: "execute_command",
          args: {
            command: `node -e 'require("fs").writeFileSync("leak.txt", String(process.env.GITHUB_TOKEN)); require("fs").rmSync("canary.txt")'`,
          },
        },
      ],
    },
    { content: "done" },
  ]);
  try {
    const r = await runCli(["--workspace", tmp.dir, "--approval", "suggest", "--sandbox", "off", "go"], {
      env: baseEnv({
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: "sk-test",
        GITHUB_TOKEN: "ghp_secret",
        MINI_CURSOR_TRUST_FILE: store,
      }),
    });
    expect(r.stdout + r.stderr).toContain("They are ignored until you trust this file");
    // The model was told the call was declined: suggest mode asks, and nobody could answer.
    expect(JSON.stringify(model.requests[1]?.messages)).toContain(
      "This execute_command call was not run, because nobody could be asked to approve it",
    );
    expect(readFileSync(canary, "utf8")).toBe("keep");
    expect(() => readFileSync(path.join(tmp.dir, "leak.txt"), "utf8")).toThrow();
  } finally {
    await model.close();
  }
}, 60_000);
