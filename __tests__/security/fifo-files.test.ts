import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { baseEnv, NOBODY, RUNNING_AS_ROOT, runCliAs } from "../helpers/cli.js";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 42.7 against the real CLI and the scripted provider: a FIFO where mini-cursor reads a
 * file for itself (AGENTS.md, the project's rules file, a custom command, the workspace's .env
 * and .gitignore) is refused at once, never waited on. The run finishes, says which file was not
 * read and why, and the next start in the workspace works too; as root and as an ordinary user.
 */

jest.setTimeout(240_000);

/** Far less than a hang, far more than a busy machine needs. */
const RUN_DEADLINE_MS = 120_000;

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  chmodSync(tmp.dir, 0o755);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

function mkfifo(file: string): void {
  expect(spawnSync("mkfifo", [file]).status).toBe(0);
  expect(lstatSync(file).isFIFO()).toBe(true);
}

function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (lstatSync(p).isDirectory()) chownTree(p, uid);
    else chownSync(p, uid, uid);
  }
}

const fifoNote = (file: string) =>
  `${file} was not read: it is a named pipe (FIFO), not a regular file. Replace it with a regular file to use it.`;

async function run(uid: number | undefined, dirs: { ws: string; home: string }, script: ScriptStep[], args: string[]) {
  await server?.close();
  server = await startOpenAIServer(script);
  return runCliAs(uid, ["--workspace", dirs.ws, "--sandbox", "off", ...args], {
    cwd: dirs.ws,
    env: baseEnv({
      HOME: dirs.home,
      XDG_CONFIG_HOME: dirs.home,
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "sk-test",
      MINI_CURSOR_MAX_RETRIES: "0",
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home, "trust.json"),
    }),
    timeoutMs: RUN_DEADLINE_MS,
  });
}

describe.each([
  ["as this user", undefined],
  ["as an ordinary user", NOBODY],
] as const)("%s", (_, uid) => {
  const maybe = uid === undefined || RUNNING_AS_ROOT ? test : test.skip;

  function prepare() {
    const dirs = { ws: path.join(tmp.dir, "ws"), home: path.join(tmp.dir, "home") };
    mkdirSync(dirs.ws);
    mkdirSync(dirs.home);
    return dirs;
  }
  const own = (dirs: { ws: string; home: string }) => {
    if (uid !== undefined) for (const dir of [dirs.ws, dirs.home]) chownTree(dir, uid);
  };

  maybe("full-auto: the model runs `mkfifo AGENTS.md`; the next turn and the next start go on", async () => {
    const dirs = prepare();
    own(dirs);
    const mkfifoCall: ScriptStep = {
      toolCalls: [{ name: "execute_command", args: { command: "mkfifo AGENTS.md && echo made" } }],
    };
    const first = await run(uid, dirs, [mkfifoCall, { content: "Done." }], ["--approval", "full-auto", "--json", "go"]);
    expect(first.code).toBe(0);
    expect(statSync(path.join(dirs.ws, "AGENTS.md")).isFIFO()).toBe(true);
    expect(first.stderr).toContain(fifoNote(path.join(dirs.ws, "AGENTS.md")));
    expect(first.events.at(-1)).toMatchObject({ type: "run_end", reason: "done" });
    // Its second request was built without the file, and sent.
    expect(server!.requests).toHaveLength(2);
    expect(JSON.stringify(server!.requests[1]!.messages)).not.toContain("# Project instructions");
    const next = await run(uid, dirs, [{ content: "Still here." }], ["--json", "again"]);
    expect(next.code).toBe(0);
    expect(next.stderr).toContain(fifoNote(path.join(dirs.ws, "AGENTS.md")));
    expect(next.events.find((e) => e.type === "final")).toMatchObject({ text: "Still here." });
  });

  maybe(
    "FIFOs as AGENTS.md, the rules file, a custom command, .env and .gitignore: a custom command runs, each FIFO is said",
    async () => {
      const dirs = prepare();
      mkdirSync(path.join(dirs.ws, ".mini-cursor"));
      const commands = path.join(dirs.home, "mini-cursor", "commands");
      mkdirSync(commands, { recursive: true });
      writeFileSync(path.join(commands, "greet.md"), "Say hello to $ARGUMENTS.\n");
      own(dirs);
      const fifos = [
        path.join(dirs.ws, "AGENTS.md"),
        path.join(dirs.ws, ".mini-cursor", "config.json"),
        path.join(dirs.ws, ".env"),
        path.join(dirs.ws, ".gitignore"),
        path.join(commands, "broken.md"),
      ];
      for (const file of fifos) mkfifo(file);
      if (uid !== undefined) for (const file of fifos) chownSync(file, uid, uid);
      for (const args of [["--json"], []]) {
        const r = await run(uid, dirs, [{ content: "Hello, world." }], [...args, "/greet the world"]);
        expect(r.code).toBe(0);
        const said = r.stdout + r.stderr;
        if (args.length > 0) expect(r.stdout).not.toContain("was not read");
        for (const file of [fifos[0]!, fifos[1]!, fifos[4]!]) expect(said).toContain(fifoNote(file));
        const sent = server!.requests[0]!.messages.filter((m) => m.role === "user").map((m) => String(m.content));
        expect(sent).toEqual(["Say hello to the world."]);
      }
    },
  );
});
