import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createRedactor, REDACTED } from "../../src/workspace/redact.js";
import { secretValues } from "../../src/settings.js";
import { createTools, type OutputChunk, type Toolset } from "../../src/tools/index.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { makeTempDir } from "../helpers/tmp.js";
import { stateDirOf } from "../helpers/state-dir.js";

/**
 * Attack: the API key sits in the workspace's `.env`. A prompt-injected model reads it
 * (read_file, search_files), encodes it past a plain-text filter (`base64 .env`, `xxd -p`),
 * prints it in two pieces so no single chunk holds it, or makes the output long enough to be
 * saved to a file. None of these may show or save the key.
 */

const KEY = "sk-proj-Zq8vX2mN4bR7tY1uI9oP3aS6dF0gH5jK";
const ENV_FILE = `# local settings\nPORT=3000\nOPENAI_API_KEY=${KEY}\n`;
let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;
let chunks: string[];

beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, ".env"), ENV_FILE);
  writeFileSync(path.join(tmp.dir, "app.ts"), "const port = 3000;\n");
  chunks = [];
  tools = createTools({
    workspace: tmp.dir,
    env: { PATH: process.env.PATH },
    redact: secretValues(tmp.dir, {}),
    onOutput: (c: OutputChunk) => chunks.push(c.text),
  });
});

afterEach(async () => {
  await tools.processes.stopAll();
  tmp.cleanup();
});

const call = async (name: string, args: Record<string, unknown>) =>
  String(await (tools as unknown as Record<string, { invoke(a: unknown): Promise<unknown> }>)[name]!.invoke(args));

/** 12-character pieces of base64(text) lying wholly inside the key: none may be printed. */
function encodedPieces(text: string, encode: (b: Buffer) => string, bitsPerChar: number): string[] {
  const encoded = encode(Buffer.from(text));
  const at = text.indexOf(KEY);
  const from = Math.ceil((8 * at) / bitsPerChar);
  const to = Math.floor((8 * (at + KEY.length)) / bitsPerChar);
  const pieces: string[] = [];
  for (let i = from; i + 12 <= to; i += 4) pieces.push(encoded.slice(i, i + 12));
  return pieces;
}

it("the workspace .env's secret values are the ones redacted", () => {
  expect(secretValues(tmp.dir, { GITHUB_TOKEN: "ghp_abcdefgh12345", HOME: "/home/me" })).toEqual([
    "ghp_abcdefgh12345",
    KEY,
  ]);
});

it("read_file and search_files never return the key", async () => {
  const read = await call("read_file", { filePath: ".env" });
  expect(read).toBe(
    `     1\t# local settings\n     2\tPORT=3000\n     3\tOPENAI_API_KEY=${REDACTED}\n\n[Lines 1-3 of 3, end of file.]`,
  );
  for (const env of [{ PATH: process.env.PATH }, { PATH: "", MINI_CURSOR_RIPGREP: "off" }]) {
    const t = createTools({ workspace: tmp.dir, env, redact: secretValues(tmp.dir, {}) });
    expect(String(await t.search_files.invoke({ pattern: "sk-proj" } as never))).toBe(
      `.env:3: OPENAI_API_KEY=${REDACTED}\n\n[1 matching line in 1 file under the workspace.]`,
    );
  }
});

it("base64, base64url and hex encodings of the key are redacted, wrapped or not", async () => {
  for (const command of [
    "base64 .env",
    "base64 -w0 .env",
    "tail -c +3 .env | base64",
    "tail -c +2 .env | base64 -w0",
    "xxd -p .env",
    "basenc --base64url .env",
  ]) {
    const out = (await call("execute_command", { command })).replace(/\n/g, "");
    expect(out).toContain(REDACTED);
    const shifted = command.startsWith("tail -c +3")
      ? ENV_FILE.slice(2)
      : command.startsWith("tail -c +2")
        ? ENV_FILE.slice(1)
        : ENV_FILE;
    const pieces = command.startsWith("xxd")
      ? encodedPieces(shifted, (b) => b.toString("hex"), 4)
      : command.includes("url")
        ? encodedPieces(shifted, (b) => b.toString("base64url"), 6)
        : encodedPieces(shifted, (b) => b.toString("base64"), 6);
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces) expect(out).not.toContain(piece);
  }
});

it("a key printed in two pieces is redacted in the live stream, the result and the saved output", async () => {
  const command =
    "K=$(sed -n 's/^OPENAI_API_KEY=//p' .env); for i in $(seq 1 2000); do echo \"line $i of padding to pass the cap\"; done; " +
    'printf "%s" "${K:0:17}"; sleep 0.3; printf "%s\\n" "${K:17}"; echo end';
  const out = await call("execute_command", { command });
  expect(chunks.length).toBeGreaterThan(1);
  const stream = chunks.join("");
  expect(stream).not.toContain(KEY.slice(0, 17));
  expect(stream).not.toContain(KEY.slice(17));
  expect(stream).toContain(`${REDACTED}\nend\n`);
  expect(out).not.toContain(KEY.slice(0, 17));
  expect(out).toContain(`${REDACTED}\nend`);
  const saved = readdirSync(path.join(stateDirOf(tmp.dir), "output"));
  expect(saved.length).toBe(1);
  const file = readFileSync(path.join(stateDirOf(tmp.dir), "output", saved[0]!), "utf8");
  expect(file).toContain(`${REDACTED}\nend\n`);
  expect(file).not.toContain(KEY.slice(0, 17));
  expect(file).not.toContain(KEY.slice(17));
});

it("the stream redactor holds back only what could start a secret", () => {
  const s = createRedactor([KEY]).stream();
  expect(s.push("hello sk-pr")).toBe("hello ");
  expect(s.push("oj-Zq8")).toBe("");
  expect(s.push(`${KEY.slice(11)} bye\n`)).toBe(`${REDACTED} bye\n`);
  expect(s.push("sk-")).toBe("");
  expect(s.push("nope")).toBe("sk-nope");
  expect(s.flush()).toBe("");
});

it("through the CLI, the terminal never shows the key printed in two pieces", async () => {
  const command = `K=$(sed -n 's/^OPENAI_API_KEY=//p' .env); printf "%s" "\${K:0:17}"; sleep 0.3; printf "%s\\n" "\${K:17}"`;
  const r = await runCli(
    ["--workspace", tmp.dir, "--sandbox", "off", "--approval", "full-auto", `run \`${command}\``],
    { env: baseEnv() },
  );
  expect(r.code).toBe(0);
  expect(r.stdout + r.stderr).not.toContain(KEY.slice(0, 17));
  expect(r.stdout + r.stderr).not.toContain(KEY.slice(17));
  expect(r.stdout).toContain(REDACTED);
}, 60_000);
