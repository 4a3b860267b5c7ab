import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { classifyCall } from "../../src/policy/approval.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Attack: a model (or a repository's instructions) creates the project's command rules file
 * with allow rules for itself — by copying, moving, downloading or teeing it into place, or
 * by write_file through a dangling symlink that points at it. Each must ask, in every mode.
 */

let tmp: ReturnType<typeof makeTempDir>;

beforeEach(() => {
  tmp = makeTempDir();
  mkdirSync(path.join(tmp.dir, "x"));
  writeFileSync(path.join(tmp.dir, "x", "mini-cursor.config.json"), JSON.stringify({ commands: { allow: ["rm"] } }));
});

afterEach(() => tmp.cleanup());

const COMMANDS = [
  "cp x/mini-cursor.config.json .",
  "mv x/mini-cursor.config.json ./",
  "curl -sO https://example.test/mini-cursor.config.json",
  "wget -q https://example.test/mini-cursor.config.json",
  "cat x/mini-cursor.config.json | tee mini-cursor.config.json",
  'echo \'{"commands":{"allow":["rm"]}}\' > .mini-cursor/config.json',
  "cd x && cp mini-cursor.config.json ..",
];

it.each(COMMANDS)("`%s` asks even in full-auto, and an 'always' answer does not cover it", async (command) => {
  const decision = await classifyCall(
    { name: "execute_command", args: { command } },
    "full-auto",
    ["execute_command:cp", "execute_command:mv"],
    { workspace: tmp.dir },
  );
  expect(decision.action).toBe("ask");
  expect(decision.alwaysAsks).toBe(true);
  expect(decision.reason).toMatch(
    /^may create or change the project's command rules \(it names (mini-cursor\.config\.json|\.mini-cursor)\)$/,
  );
});

it("write_file through a dangling symlink to the rules file asks in full-auto", async () => {
  symlinkSync("mini-cursor.config.json", path.join(tmp.dir, "innocent.json"));
  const decision = await classifyCall(
    { name: "write_file", args: { filePath: "innocent.json", content: "{}" } },
    "full-auto",
    ["write_file"],
    { workspace: tmp.dir },
  );
  expect(decision).toEqual({
    action: "ask",
    reason: "changes the project's command rules (innocent.json is mini-cursor.config.json)",
    alwaysAsks: true,
    alwaysKeys: [],
  });
});

it("ordinary commands and files still run in full-auto", async () => {
  expect(
    (
      await classifyCall({ name: "execute_command", args: { command: "cp x/a.json ." } }, "full-auto", [], {
        workspace: tmp.dir,
      })
    ).action,
  ).toBe("run");
  expect(
    (
      await classifyCall({ name: "write_file", args: { filePath: "a.json", content: "{}" } }, "full-auto", [], {
        workspace: tmp.dir,
      })
    ).action,
  ).toBe("run");
});

it("through the CLI in full-auto with nobody to ask, the copy is declined and no rules file appears", async () => {
  const r = await runCli(
    ["--workspace", tmp.dir, "--sandbox", "off", "--approval", "full-auto", "run `cp x/mini-cursor.config.json .`"],
    { env: baseEnv() },
  );
  expect(r.stdout + r.stderr).toContain("may create or change the project's command rules");
  expect(existsSync(path.join(tmp.dir, "mini-cursor.config.json"))).toBe(false);
}, 60_000);

it("a command that gets past the text check (a glob, a script) has its rules change undone", async () => {
  const { createTools } = await import("../../src/tools/index.js");
  const tools = createTools({ workspace: tmp.dir, env: { PATH: process.env.PATH } });
  const run = async (command: string) => String(await tools.execute_command.invoke({ command } as never));
  const created = await run("cp x/* .; echo copied");
  expect(created).toContain("copied");
  expect(created).toContain(
    "Note: this command changed the project's command rules (mini-cursor.config.json); commands may not do that, so the change was undone. Ask the user to edit the rules file if a rule should change.",
  );
  expect(existsSync(path.join(tmp.dir, "mini-cursor.config.json"))).toBe(false);
  // An existing file changed by a script comes back as it was.
  writeFileSync(path.join(tmp.dir, "mini-cursor.config.json"), '{"commands":{"deny":["curl"]}}\n');
  const script = path.join(tmp.dir, "x", "evil.sh");
  writeFileSync(script, 'f=$(ls | grep -m1 "config.json$"); echo "{}" > "$f"; echo done\n');
  const changed = await run("bash x/evil.sh");
  expect(changed).toContain("done");
  expect(changed).toContain("so the change was undone");
  expect(readFileSync(path.join(tmp.dir, "mini-cursor.config.json"), "utf8")).toBe('{"commands":{"deny":["curl"]}}\n');
  await tools.processes.stopAll();
});
