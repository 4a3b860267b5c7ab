import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { baseEnv, NOBODY, RUNNING_AS_ROOT, runCli, runCliAs } from "../helpers/cli.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";
import { chownTree } from "../helpers/as-user.js";

/**
 * The "Done when", end to end: the real CLI as a subprocess, driven by a scripted
 * OpenAI-compatible server on 127.0.0.1 that asks for the commands, with a fake home folder in
 * /var/tmp (the sandbox's /tmp is private, so a file there would prove nothing).
 */

const TIMEOUT_MS = 90_000;

const KEY = `sk-test-${process.pid}-do-not-leak-0123456789`;

let tmp: ReturnType<typeof makeTempDir>;
let home: string;
let outside: string;
let server: OpenAIServer | undefined;

beforeEach(() => {
  tmp = makeTempDir();
  home = mkdtempSync("/var/tmp/mini-cursor-cli-home-");
  outside = mkdtempSync("/var/tmp/mini-cursor-cli-outside-");
  mkdirSync(path.join(home, "x"));
  writeFileSync(path.join(home, "x", "keep.txt"), "keep\n");
}, TIMEOUT_MS);

afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
  rmSync(home, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
}, TIMEOUT_MS);

function envFor(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return baseEnv({
    HOME: home,
    OPENAI_API_KEY: KEY,
    OPENAI_BASE_URL: server?.url,
    GITHUB_TOKEN: "ghp_must_not_leak_123456",
    ...extra,
  });
}

/** One turn calling execute_command with each command, then a final answer. */
async function scriptCommands(commands: string[]): Promise<OpenAIServer> {
  server = await startOpenAIServer([
    { toolCalls: commands.map((command) => ({ name: "execute_command", args: { command } })) },
    { content: "Finished." },
  ]);
  return server;
}

/** What the model was told for each command: the tool messages of the second request. */
function toolResults(request: ChatRequest, commands: string[]): string[] {
  const assistant = request.messages.find((m) => m.role === "assistant" && m.tool_calls)!;
  return commands.map((command) => {
    const call = assistant.tool_calls!.find(
      (c) => (JSON.parse(c.function.arguments) as { command: string }).command === command,
    )!;
    return String(request.messages.find((m) => m.role === "tool" && m.tool_call_id === call.id)!.content);
  });
}

function processesWith(needle: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").includes(needle);
      } catch {
        return false;
      }
    });
}

test(
  "full-auto without a terminal: the tricks are not run and the model is told why; `ls -la && echo ok` runs; no key leaks",
  async () => {
    const payload = Buffer.from("rm -rf ~/x\n").toString("base64");
    const dangerous = [
      "rm -rf ~/x",
      "true && r''m -r -f ~/x",
      'bash -c "rm -rf ~/x"',
      "find ~/x -delete",
      `echo ${payload} | base64 -d | sh`,
    ];
    const benign = ["ls -la && echo ok", 'echo "key=[$OPENAI_API_KEY] gh=[$GITHUB_TOKEN]"'];
    const commands = [...dangerous, ...benign];
    await scriptCommands(commands);
    // --sandbox off: the classifier alone must stop them.
    const r = await runCli(
      ["--workspace", tmp.dir, "--approval", "full-auto", "--sandbox", "off", "--json", "tidy up"],
      { env: envFor() },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(home, "x", "keep.txt"), "utf8")).toBe("keep\n");

    expect(server!.requests).toHaveLength(2);
    const results = toolResults(server!.requests[1]!, commands);
    const reasons = [
      "dangerous command: rm deletes ~/x (in the home folder, outside the workspace)",
      "dangerous command: rm deletes ~/x (in the home folder, outside the workspace)",
      "dangerous command: rm deletes ~/x (in the home folder, outside the workspace)",
      "dangerous command: find -delete deletes files under ~/x/{} (in the home folder, outside the workspace)",
      "dangerous command: pipes the output of `base64 -d` into sh, which runs it as code nobody has read",
    ];
    reasons.forEach((reason, i) => {
      expect(results[i]).toBe(
        `This execute_command call was not run, because nobody could be asked to approve it (mini-cursor is not running on a terminal). It needed approval because: ${reason}. Such a call asks in every approval mode and no allow rule covers it: it needs a person on a terminal to approve it. Tell the user what was not done and why.`,
      );
    });
    expect(results[5]).toMatch(/^Exit code: 0\n[\s\S]*\nok$/);
    expect(results[6]).toBe("Exit code: 0\nkey=[] gh=[]");

    // The reasons are the approval events' reasons (what the prompt and Studio show).
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; request?: { reason: string }; response?: { decision: string } });
    expect(events.filter((e) => e.type === "approval").map((e) => [e.request!.reason, e.response!.decision])).toEqual(
      reasons.map((x) => [x, "deny"]),
    );

    // No key reaches the model: not in the system prompt, the tool results, or anything else sent.
    const sent = JSON.stringify(server!.requests);
    expect(sent).not.toContain(KEY);
    expect(sent).not.toContain("ghp_must_not_leak");
    expect(r.stdout).not.toContain(KEY);
  },
  TIMEOUT_MS,
);

test(
  "in the sandbox, writes outside the workspace and into the home folder leave both untouched, and setsid children die",
  async () => {
    const marker = `sleep 4646.${process.pid}`;
    const writer = (file: string) => `node -e "require('fs').writeFileSync(process.argv[1], 'pwned')" ${file}`;
    const commands = [
      writer(`${outside}/pwned.txt`),
      writer("$HOME/pwned.txt"),
      `setsid ${marker} > /dev/null 2>&1 & echo detached`,
      "echo inside > inside.txt",
    ];
    await scriptCommands(commands);
    const r = await runCli(["--workspace", tmp.dir, "--approval", "full-auto", "--sandbox", "on", "tidy up"], {
      env: envFor(),
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("sandbox   bubblewrap: only the workspace is writable, credentials hidden, network on");

    const results = toolResults(server!.requests[1]!, commands);
    expect(results[0]).toMatch(/^Exit code: 1\n[\s\S]*EROFS: read-only file system, open '.*pwned\.txt'/);
    expect(results[1]).toMatch(/^Exit code: 1\n[\s\S]*EROFS: read-only file system/);
    expect(results[2]).toBe("Exit code: 0\ndetached");
    expect(results[3]).toBe("Exit code: 0\n(no output)");
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(path.join(home, "pwned.txt"))).toBe(false);
    expect(readFileSync(path.join(tmp.dir, "inside.txt"), "utf8")).toBe("inside\n");
    expect(processesWith(marker)).toEqual([]);
  },
  TIMEOUT_MS,
);

/** A PATH holding only `node`, so bubblewrap cannot be found. */
function pathWithoutBwrap(): string {
  const dir = path.join(tmp.dir, ".bin-no-bwrap");
  mkdirSync(dir);
  symlinkSync(process.execPath, path.join(dir, "node"));
  return dir;
}

test(
  "--sandbox on without bubblewrap refuses to start and says how to install it",
  async () => {
    const r = await runCli(["--workspace", tmp.dir, "--sandbox", "on", "list the files here"], {
      env: baseEnv({ HOME: home, PATH: pathWithoutBwrap() }),
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "mini-cursor: --sandbox on needs bubblewrap, but bubblewrap (bwrap) is not installed. To use it, install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap); or run with --sandbox auto.\n",
    );
  },
  TIMEOUT_MS,
);

test(
  "--sandbox auto without bubblewrap runs, and the banner says the sandbox is off and how to install it",
  async () => {
    const r = await runCli(["--workspace", tmp.dir, "list the files here"], {
      env: baseEnv({ HOME: home, PATH: pathWithoutBwrap() }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "  sandbox   off: bubblewrap (bwrap) is not installed; to turn it on, install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)\n",
    );
  },
  TIMEOUT_MS,
);

test(
  "an invalid rules file stops the run before it starts, naming the file",
  async () => {
    writeFileSync(path.join(tmp.dir, "mini-cursor.config.json"), "{ nope");
    const r = await runCli(["--workspace", tmp.dir, "list the files here"], { env: baseEnv({ HOME: home }) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^mini-cursor: cannot read the project rules: mini-cursor\.config\.json is not valid JSON/,
    );
  },
  TIMEOUT_MS,
);

/** What the CLI tells the model about a call it could not ask about (off a terminal). */
const notRun = (reason: string) =>
  `This execute_command call was not run, because nobody could be asked to approve it (mini-cursor is not running on a terminal). It needed approval because: ${reason}. Such a call asks in every approval mode and no allow rule covers it: it needs a person on a terminal to approve it. Tell the user what was not done and why.`;

const users: [string, number | undefined][] = [
  ["root", undefined],
  ["uid 65534", NOBODY],
];

describe.each(users)("issue 44, as %s", (_name, uid) => {
  (uid === undefined || RUNNING_AS_ROOT ? test : test.skip)(
    "full-auto without a terminal: a relative path after `cd` into a folder only known at run time is not run, and the home folder's files survive",
    async () => {
      const attacks = [
        'cd "$(echo ~)" && rm -f .bashrc',
        'cd "$(dirname ~/.profile)" && sed -i s/profile/pwned/ .profile',
        // Programs that write where they run, and stdin put in the middle of a path (xargs -I).
        "cd ~ && git init -q",
        "echo .bashrc | xargs -I{} cp /dev/null ~/{}",
        `mkdir ${JSON.stringify(path.join(home, "made"))}`,
      ];
      const control = "cd src && rm -f old.txt";
      writeFileSync(path.join(home, ".bashrc"), "bashrc\n");
      writeFileSync(path.join(home, ".profile"), "profile\n");
      mkdirSync(path.join(tmp.dir, "src"));
      writeFileSync(path.join(tmp.dir, "src", "old.txt"), "old\n");
      if (uid !== undefined) {
        chownTree(tmp.dir, uid);
        chownTree(home, uid);
      }
      // Control: run by a shell as this user from the workspace, the first attack does delete ~/.bashrc.
      const argv = ["sh", "-c", attacks[0]!];
      const [file, args] =
        uid === undefined
          ? ["sh", argv.slice(1)]
          : ["setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...argv]];
      execFileSync(file!, args as string[], { cwd: tmp.dir, env: { ...process.env, HOME: home } });
      expect(existsSync(path.join(home, ".bashrc"))).toBe(false);
      writeFileSync(path.join(home, ".bashrc"), "bashrc\n");
      if (uid !== undefined) chownSync(path.join(home, ".bashrc"), uid, uid);

      const commands = [...attacks, control];
      await scriptCommands(commands);
      // --sandbox off: the classifier alone must stop them.
      const r = await runCliAs(
        uid,
        ["--workspace", tmp.dir, "--approval", "full-auto", "--sandbox", "off", "--json", "tidy up"],
        { cwd: tmp.dir, env: envFor(), timeoutMs: TIMEOUT_MS - 10_000 },
      );
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      const reasons = [
        "dangerous command: rm deletes .bashrc (in a folder only known at run time, maybe outside the workspace)",
        "dangerous command: sed -i changes .profile (in a folder only known at run time, maybe outside the workspace)",
        `dangerous command: git runs in ${home} (outside the workspace), where it may change files`,
        "dangerous command: cp writes to ~/{} (in the home folder, outside the workspace)",
        `dangerous command: mkdir makes ${JSON.stringify(path.join(home, "made"))} (in the home folder, outside the workspace)`,
      ];
      const approvals = (
        r.events as Array<{ type: string; request?: { reason: string }; response?: { decision: string } }>
      )
        .filter((e) => e.type === "approval")
        .map((e) => [e.request!.reason, e.response!.decision]);
      expect(approvals).toEqual(reasons.map((reason) => [reason, "deny"]));
      expect(toolResults(server!.requests[1]!, commands)).toEqual([
        ...reasons.map(notRun),
        "Exit code: 0\n(no output)",
      ]);
      expect(readFileSync(path.join(home, ".bashrc"), "utf8")).toBe("bashrc\n");
      expect(readFileSync(path.join(home, ".profile"), "utf8")).toBe("profile\n");
      expect([existsSync(path.join(home, ".git")), existsSync(path.join(home, "made"))]).toEqual([false, false]);
      // The control ran: full-auto does run what the classifier lets through.
      expect(existsSync(path.join(tmp.dir, "src", "old.txt"))).toBe(false);
    },
    TIMEOUT_MS,
  );
});
