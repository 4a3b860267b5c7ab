import { spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import { attackTools, prepareRace, SECRET, startSwapper, writtenOutside } from "../helpers/race-attack.js";
import { asUser, skipUnlessReachable } from "../helpers/as-user.js";
import { NOBODY } from "../helpers/cli.js";

/**
 * Attack: a process in the workspace swaps a folder and a symlink to a secret folder outside
 * (renameat2 RENAME_EXCHANGE in a loop) while the file tools work on paths through it. No
 * tool result may show the secret, and nothing may be written outside. Also: a symlink named
 * in a search glob, and a hard link that search_files must refuse like read_file.
 */

const ROUNDS = 150;
let base: string;
let workspace: string;
let outside: string;
let swapper: ChildProcess | undefined;

beforeEach(() => {
  base = mkdtempSync("/var/tmp/mini-cursor-races-");
  chmodSync(base, 0o755);
  workspace = path.join(base, "ws");
  outside = path.join(base, "outside");
  spawnSync("mkdir", [workspace, outside]);
  prepareRace(workspace, outside);
});

afterEach(() => {
  swapper?.kill("SIGKILL");
  swapper = undefined;
  rmSync(base, { recursive: true, force: true });
});

it("swapping a folder for a symlink never leads a file tool outside the workspace", async () => {
  swapper = await startSwapper(workspace);
  const { leaks, calls } = await attackTools(createTools({ workspace, env: { PATH: process.env.PATH } }), ROUNDS);
  swapper.kill("SIGKILL");
  expect(calls).toBe(ROUNDS * 9);
  expect(leaks).toEqual([]);
  expect(writtenOutside(outside)).toEqual([]);
  expect(readFileSync(path.join(outside, "secret", "id_rsa"), "utf8")).toBe(`${SECRET}\n`);
}, 120_000);

it("as an ordinary user (nobody), the same race leaks nothing", () => {
  if (process.getuid?.() !== 0) {
    console.warn("security-races: not root, so the run as nobody through setpriv is skipped");
    return;
  }
  if (skipUnlessReachable(NOBODY, "security-races as nobody")) return;
  spawnSync("chown", ["-R", "65534:65534", workspace, outside]);
  const script = path.join(process.cwd(), "__tests__", "helpers", "race-run.ts");
  const tsx = path.join(process.cwd(), "node_modules", ".bin", "tsx");
  const run = spawnSync(...asUser(NOBODY, [tsx, script, workspace, outside, String(ROUNDS)]), {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: base },
    timeout: 110_000,
  });
  expect(run.stderr).toBe("");
  expect(JSON.parse(run.stdout)).toEqual({ uid: 65534, calls: ROUNDS * 9, leaks: [], writtenOutside: [] });
  expect(readFileSync(path.join(outside, "secret", "id_rsa"), "utf8")).toBe(`${SECRET}\n`);
}, 120_000);

it("search_files does not follow a symlink named in its glob, nor show a hard-linked file", async () => {
  rmSync(path.join(workspace, "d"), { recursive: true });
  const hard = path.join(workspace, "hard.txt");
  linkSync(path.join(outside, "secret", "id_rsa"), hard);
  writeFileSync(path.join(workspace, "plain.txt"), "SECRET-free\n");
  symlinkSync(path.join(outside, "secret", "id_rsa"), path.join(workspace, "direct-link.txt"));
  for (const env of [{ PATH: process.env.PATH }, { PATH: "", MINI_CURSOR_RIPGREP: "off" }]) {
    const tools = createTools({ workspace, env });
    for (const args of [
      { pattern: "SECRET" },
      { pattern: "SECRET", glob: "lnk/*" },
      { pattern: "SECRET", glob: "lnk/id_rsa" },
      { pattern: "SECRET", path: "hard.txt" },
    ]) {
      const out = String(await tools.search_files.invoke(args as never));
      expect(out).not.toContain("KEY-0f9a2c");
    }
    expect(String(await tools.search_files.invoke({ pattern: "SECRET" } as never))).toContain(
      "plain.txt:1: SECRET-free",
    );
    const found = String(await tools.find_files.invoke({ pattern: "lnk/*" } as never));
    expect(found).not.toContain("only-outside");
    expect(String(await tools.read_file.invoke({ filePath: "hard.txt" } as never))).toMatch(
      /^Refused: "hard.txt" has 2 hard links/,
    );
  }
});
