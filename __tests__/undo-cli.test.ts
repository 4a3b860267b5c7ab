import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";

/** `--undo` and the session's /undo and /rewind through the real CLI, with the embedded offline model. */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

const CLI_DEADLINE_MS = 120_000;

describe.each(["graph", "loop"] as const)("%s engine", (engine) => {
  test(
    "--undo refuses to overwrite a hand edit off a terminal, --force overwrites it, and a session lists and rewinds turns",
    async () => {
      const cli = (...args: string[]) =>
        runCli(["--workspace", tmp.dir, "--engine", engine, "--thread", "demo", ...args], {
          timeoutMs: CLI_DEADLINE_MS,
        });
      expect((await cli("create a file a.txt with content A")).code).toBe(0);
      expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("A");
      writeFileSync(path.join(tmp.dir, "a.txt"), "by hand");

      const refused = await cli("--undo");
      expect(refused.code).toBe(1);
      expect(refused.stdout + refused.stderr).toContain(
        "These files were changed since turn 1 (by hand or by another thread); undoing it would overwrite those changes:\n  a.txt\n" +
          "Nothing was changed. To overwrite them, run the same command with --force.",
      );
      expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("by hand");

      const forced = await cli("--undo", "--force");
      expect(forced.code).toBe(0);
      expect(forced.stdout + forced.stderr).toContain(
        "Undid turn 1: create a file a.txt with content A\nFiles (1):\n  removed    a.txt",
      );
      expect(existsSync(path.join(tmp.dir, "a.txt"))).toBe(false);

      const nothing = await cli("--undo");
      expect(nothing.code).toBe(1);
      expect(nothing.stdout + nothing.stderr).toContain("Nothing to undo: thread demo has no turns.");

      const session = await runCli(["--workspace", tmp.dir, "--engine", engine, "--thread", "demo", "--each-line"], {
        input: "create a file b.txt with content B\ncreate a file c.txt with content C\n/rewind\n/rewind 1\n/exit\n",
        timeoutMs: CLI_DEADLINE_MS,
      });
      expect(session.code).toBe(0);
      expect(session.stdout).toContain(
        "Turns (/rewind <n> goes back to before turn n):\n    1  create a file b.txt with content B\n    2  create a file c.txt with content C",
      );
      expect(session.stdout).toContain(
        "Undid turn 2: create a file c.txt with content C\nFiles (1):\n  removed    c.txt\nUndid turn 1: create a file b.txt with content B\nFiles (1):\n  removed    b.txt",
      );
      expect(existsSync(path.join(tmp.dir, "b.txt"))).toBe(false);
      expect(existsSync(path.join(tmp.dir, "c.txt"))).toBe(false);
    },
    CLI_DEADLINE_MS * 6,
  );
});

test("--undo without a thread is a usage error", async () => {
  const r = await runCli(["--workspace", tmp.dir, "--undo"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    "mini-cursor: --undo needs the thread: add --thread <id> or --continue (--threads lists them).\n",
  );
});

test(
  "a thread remembers its engine: --threads shows it, --continue and --undo without --engine use it",
  async () => {
    const cli = (...args: string[]) => runCli(["--workspace", tmp.dir, ...args], { timeoutMs: CLI_DEADLINE_MS });
    expect((await cli("--engine", "loop", "--thread", "looped", "create a file a.txt with content A")).code).toBe(0);

    const listed = await cli("--threads");
    expect(listed.stdout).toMatch(
      /^ {2}looped +\d{4}-\d\d-\d\d \d\d:\d\d {2}loop +2 {2}create a file a\.txt with content A$/m,
    );

    const continued = await cli("--continue", "read a.txt");
    expect(continued.code).toBe(0);
    expect(continued.stdout).toContain("Thread looped was made with --engine loop; it goes on with that engine.");
    expect(continued.stdout).toMatch(/engine loop/);

    const undone = await cli("--thread", "looped", "--undo");
    expect(undone.stdout + undone.stderr).toContain("Undid turn 2: read a.txt");
    const again = await cli("--thread", "looped", "--undo");
    expect(again.code).toBe(0);
    expect(again.stdout + again.stderr).toContain(
      "Undid turn 1: create a file a.txt with content A\nFiles (1):\n  removed    a.txt",
    );
    expect(existsSync(path.join(tmp.dir, "a.txt"))).toBe(false);
  },
  CLI_DEADLINE_MS * 5,
);
