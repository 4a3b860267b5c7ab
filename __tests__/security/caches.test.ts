import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { bubblewrapArgs, createSandbox, type Sandbox, type SandboxOptions } from "../../src/security/sandbox.js";
import { hostEnvironment } from "../../src/settings.js";
import { createToolContext, type ToolContext } from "../../src/tools/context.js";
import { executeCommand } from "../../src/tools/execute-command.js";
import { createProcessRegistry } from "../../src/workspace/processes.js";
import { requireBubblewrap } from "../helpers/bubblewrap.js";

/**
 * Attacks on what the sandbox leaves writable or visible in the home folder:
 * - replacing programs that run later outside the sandbox (~/.bun/bin/bun, ~/.npm/_npx,
 *   corepack's and pnpm's binaries) — only package stores may be writable;
 * - the caches the user really configured (npm_config_cache, `cache=` in ~/.npmrc) must be the
 *   writable ones, and npm's non-secret config (registry, cafile) visible without its token;
 * - credentials behind symlinks (a dotfiles manager's ~/.npmrc) and beyond the fixed list
 *   (~/.config/<tool>/hosts.json, *token*, *credentials* under ~/.config).
 */

const isRoot = process.getuid?.() === 0;
let base: string;
let home: string;
let workspace: string;
const sandboxes: Sandbox[] = [];
const contexts: ToolContext[] = [];

const EXECUTABLES = [
  ".bun/bin/bun",
  ".npm/_npx/abc/node_modules/.bin/create-vite",
  ".cache/corepack/pnpm/9.0.0/bin/pnpm.cjs",
  ".local/share/pnpm/pnpm",
  ".deno/bin/deno",
  ".nvm/.cache/bin/node.tar",
];
const STORES = [".bun/install/cache", ".local/share/pnpm/store", ".npm/_cacache", ".cache/yarn", ".cargo/registry"];

beforeAll(requireBubblewrap);

beforeEach(() => {
  base = mkdtempSync("/var/tmp/mini-cursor-caches-");
  chmodSync(base, 0o755);
  home = path.join(base, "home");
  workspace = path.join(base, "ws");
  mkdirSync(workspace, { recursive: true });
  for (const exe of EXECUTABLES) {
    mkdirSync(path.dirname(path.join(home, exe)), { recursive: true });
    writeFileSync(path.join(home, exe), "#!/bin/sh\necho genuine\n", { mode: 0o755 });
  }
  for (const store of STORES) mkdirSync(path.join(home, store), { recursive: true });
  mkdirSync(path.join(home, "dotfiles"));
  writeFileSync(
    path.join(home, "dotfiles", "npmrc"),
    "registry=https://npm.example.test/\ncafile=/etc/ssl/corp-ca.pem\n//npm.example.test/:_authToken=npm_TOKEN_abc123\n",
  );
  symlinkSync(path.join(home, "dotfiles", "npmrc"), path.join(home, ".npmrc"));
  for (const [rel, text] of [
    [".config/gh2/hosts.json", "oauth_token: gho_HOSTS\n"],
    [".config/tool/api_token", "TOKEN_FILE\n"],
    [".config/cloud/x/credentials.json", "CREDS_FILE\n"],
    [".config/editor/settings.json", '{"theme":"dark"}\n'],
  ] as const) {
    mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    writeFileSync(path.join(home, rel), text);
  }
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.processes.stopAll()));
  for (const s of sandboxes.splice(0)) s.dispose();
  rmSync(base, { recursive: true, force: true });
});

function sandboxed(extra: Partial<SandboxOptions> = {}): ToolContext {
  const sandbox = createSandbox({ workspace, home, ...extra });
  sandboxes.push(sandbox);
  const ctx = createToolContext(
    { workspace, spawnSpec: sandbox.spawnSpec, env: { PATH: process.env.PATH, HOME: home, LANG: "C.UTF-8" } },
    createProcessRegistry(),
  );
  contexts.push(ctx);
  return ctx;
}

const replaceAll = (files: readonly string[]) =>
  files.map((f) => `{ echo 'echo pwned' > ~/${f} && echo "WROTE ${f}"; } 2>/dev/null`).join("; ");
const writeStores = STORES.map((s) => `echo x > ~/${s}/probe && echo "STORE ${s}"`).join("; ");

it("programs in the home folder cannot be replaced; package stores stay writable", async () => {
  const out = await executeCommand(sandboxed(), { command: `${replaceAll(EXECUTABLES)}; ${writeStores}; echo done` });
  expect(out).not.toContain("WROTE");
  for (const store of STORES) expect(out).toContain(`STORE ${store}`);
  for (const exe of EXECUTABLES) expect(readFileSync(path.join(home, exe), "utf8")).toBe("#!/bin/sh\necho genuine\n");
});

it("npx can install into its folder (npm create vite works), but nothing it writes there reaches the host", async () => {
  const host = path.join(home, ".npm", "_npx", "abc", "node_modules", ".bin", "create-vite");
  const out = await executeCommand(sandboxed(), {
    command:
      "mkdir -p ~/.npm/_npx/new/node_modules && echo 'echo pwned' > ~/.npm/_npx/new/node_modules/tool && cat ~/.npm/_npx/new/node_modules/tool; ls ~/.npm/_npx",
  });
  expect(out).toBe("Exit code: 0\necho pwned\nnew");
  expect(existsSync(path.join(home, ".npm", "_npx", "new"))).toBe(false);
  expect(readFileSync(host, "utf8")).toBe("#!/bin/sh\necho genuine\n");
});

it("the configured npm cache (env or npmrc), yarn cache and MINI_CURSOR_WRITABLE are the writable ones", async () => {
  const npmCache = path.join(base, "ci-npm-cache");
  const yarnCache = path.join(base, "ci-yarn-cache");
  const extra = path.join(base, "extra");
  mkdirSync(yarnCache);
  mkdirSync(extra);
  const env = { npm_config_cache: npmCache, YARN_CACHE_FOLDER: yarnCache, MINI_CURSOR_WRITABLE: `${extra}` };
  const ctx = sandboxed({ caches: hostEnvironment(env).caches });
  const out = await executeCommand(ctx, {
    command: `npm_config_cache=${npmCache} npm config get cache; echo a > ${npmCache}/_cacache/probe && echo b > ${yarnCache}/probe && echo c > ${extra}/probe && echo WRITABLE`,
  });
  expect(out).toBe(`Exit code: 0\n${npmCache}\nWRITABLE`);
  // `cache=` in the user's npmrc counts too.
  writeFileSync(path.join(home, "dotfiles", "npmrc"), `cache=${path.join(base, "rc-cache")}\n`);
  const ctx2 = sandboxed();
  expect(
    await executeCommand(ctx2, { command: `echo a > ${path.join(base, "rc-cache")}/_cacache/probe && echo OK` }),
  ).toBe("Exit code: 0\nOK");
});

it("npm sees its registry and cafile but not the token, also through a symlinked ~/.npmrc", async () => {
  const out = await executeCommand(sandboxed(), {
    command: "npm config get registry; cat ~/.npmrc; cat ~/dotfiles/npmrc | grep -c authToken",
  });
  expect(out).toBe(
    "Exit code: 1\nhttps://npm.example.test/\nregistry=https://npm.example.test/\ncafile=/etc/ssl/corp-ca.pem\n0",
  );
  expect(readFileSync(path.join(home, "dotfiles", "npmrc"), "utf8")).toContain("npm_TOKEN_abc123");
});

it("credential files under ~/.config beyond the fixed list are hidden; other config is readable", async () => {
  const out = await executeCommand(sandboxed(), {
    command:
      "wc -c < ~/.config/gh2/hosts.json; wc -c < ~/.config/tool/api_token; wc -c < ~/.config/cloud/x/credentials.json; cat ~/.config/editor/settings.json",
  });
  expect(out).toBe('Exit code: 0\n0\n0\n0\n{"theme":"dark"}');
});

(isRoot ? it : it.skip)("as an ordinary user (nobody), the same arguments protect the same files", () => {
  spawnSync("chown", ["-R", "65534:65534", base]);
  const tmpDir = path.join(base, "sandbox-tmp");
  mkdirSync(tmpDir);
  chmodSync(tmpDir, 0o1777);
  const emptyFile = path.join(base, "empty");
  writeFileSync(emptyFile, "", { mode: 0o444 });
  const args = bubblewrapArgs({ workspace, home, tmpDir, emptyFile }, workspace);
  const run = spawnSync(
    "setpriv",
    [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      "bwrap",
      ...args,
      "--",
      "bash",
      "-c",
      `${replaceAll(EXECUTABLES)}; ${writeStores}; cat ~/.npmrc ~/.config/gh2/hosts.json; echo done`,
    ],
    { encoding: "utf8", env: { PATH: process.env.PATH, HOME: home } },
  );
  expect(run.stdout).not.toContain("WROTE");
  expect(run.stdout).not.toContain("TOKEN");
  expect(run.stdout).not.toContain("gho_HOSTS");
  for (const store of STORES) expect(run.stdout).toContain(`STORE ${store}`);
  expect(existsSync(path.join(home, ".bun", "bin", "bun"))).toBe(true);
  expect(readFileSync(path.join(home, ".bun", "bin", "bun"), "utf8")).toBe("#!/bin/sh\necho genuine\n");
});
