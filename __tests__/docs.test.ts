/**
 * The documentation against the code: README.md and docs/ must not drift from the CLI's flags,
 * the settings and their defaults, and the command lines they show must parse.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CommanderError } from "commander";
import { buildProgram } from "../src/cli-program.js";
import {
  faultPointSetting,
  hostEnvironment,
  loadSettings,
  type Settings,
  ripgrepAllowed,
  snapshotsEnabled,
  snapshotWatchEnabled,
  snapshotWaitMs,
  stateHomePath,
} from "../src/settings.js";
import { PROJECT_ROOT } from "./helpers/cli.js";

const read = (rel: string) => readFileSync(path.join(PROJECT_ROOT, rel), "utf8");
/** README.md, every page of docs/ and the evals page, as [path, text]. */
const PAGES: [string, string][] = [
  "README.md",
  "evals/README.md",
  ...readdirSync(path.join(PROJECT_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
].map((rel) => [rel, read(rel)]);

/** The text outside fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** Rows of the first Markdown table whose header's first cell is `firstHeader`, as cell lists. */
function tableRows(text: string, firstHeader: string): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => new RegExp(`^\\|\\s*${firstHeader}\\s*\\|`).test(l));
  if (start < 0) throw new Error(`no table starting with "${firstHeader}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    // A `\|` inside a cell is a literal bar (`graph\|loop`).
    rows.push(
      line
        .replace(/\\\|/g, "\u0000")
        .split("|")
        .slice(1, -1)
        .map((c) => c.replace(/\u0000/g, "|").trim()),
    );
  }
  return rows;
}

describe("docs/usage.md lists exactly the CLI's flags", () => {
  const program = buildProgram("0.0.0");
  const help = program.createHelp();
  const fromHelp = new Set(
    help.visibleOptions(program).flatMap((o) => o.flags.match(/(?<![\w-])--?[a-z][\w-]*/g) ?? []),
  );
  const fromDocs = new Set(
    tableRows(read("docs/usage.md"), "flag").flatMap((row) => row[0]!.match(/(?<![\w-])--?[a-z][\w-]*/g) ?? []),
  );

  test("every flag in --help has a row", () => {
    expect([...fromHelp].filter((f) => !fromDocs.has(f))).toEqual([]);
  });

  test("every flag in the table exists", () => {
    expect([...fromDocs].filter((f) => !fromHelp.has(f))).toEqual([]);
  });
});

describe("docs/configuration.md lists every setting with its true default", () => {
  const source = read("src/settings.ts");
  const rows = tableRows(read("docs/configuration.md"), "variable");
  const documented = new Map(rows.map((r) => [r[0]!.replace(/`/g, ""), r]));
  /** Every variable settings.ts reads that a user sets (not the host's HOME, XDG_*, npm_*). */
  const variables = [
    ...new Set(source.match(/\b(?:MINI_CURSOR|OPENAI|LANGSMITH|LANGCHAIN)_[A-Z0-9_]+\b|\bNO_COLOR\b|\bDEBUG\b/g)),
  ]
    // MINI_CURSOR_PASS_ENV etc. appear in comments too; the match is on names, which is what matters.
    .sort();

  test("each variable has a row of its own, or is named as another spelling in one", () => {
    const missing = variables.filter((v) => !documented.has(v) && !rows.some((r) => r[3]!.includes(`\`${v}\``)));
    expect(missing).toEqual([]);
  });

  test("each row names a variable settings.ts reads", () => {
    expect([...documented.keys()].filter((v) => !variables.includes(v))).toEqual([]);
  });

  // The default as the code computes it with nothing set; `undefined` means the row says "unset".
  const home = "/home/someone";
  const base = { MINI_CURSOR_DOTENV: "off", HOME: home, INIT_CWD: "/tmp" };
  const none = loadSettings({}, base);
  const traced = loadSettings({}, { ...base, LANGSMITH_TRACING: "true", LANGSMITH_API_KEY: "k" });
  const onOff = (v: boolean | undefined) => ((v ?? true) ? "on" : "off");
  const tilde = (p: string) => p.replace(home, "~");
  const DEFAULTS: Record<string, (s: Settings) => string | undefined> = {
    OPENAI_API_KEY: (s) => s.apiKey,
    OPENAI_BASE_URL: (s) => s.baseUrl,
    MINI_CURSOR_MODEL: (s) => s.model,
    MINI_CURSOR_WORKSPACE: () => "the folder you ran the command from",
    MINI_CURSOR_APPROVAL: (s) => s.approval,
    MINI_CURSOR_MAX_STEPS: (s) => String(s.maxSteps),
    MINI_CURSOR_ENGINE: (s) => s.engine,
    MINI_CURSOR_CONTEXT_TOKENS: (s) => String(s.contextTokens),
    MINI_CURSOR_PRICES: (s) => (s.prices ? JSON.stringify(s.prices) : undefined),
    MINI_CURSOR_TIMEOUT_MS: (s) => String(s.requestTimeoutMs),
    MINI_CURSOR_MAX_RETRIES: (s) => String(s.maxRetries),
    MINI_CURSOR_WAIT_NOTICE_MS: (s) => String(s.waitNoticeMs),
    MINI_CURSOR_SANDBOX: (s) => s.sandbox,
    MINI_CURSOR_NETWORK: (s) => onOff(s.network),
    MINI_CURSOR_PASS_ENV: (s) => (s.passEnv.length ? s.passEnv.join(",") : undefined),
    MINI_CURSOR_EDIT_TOOL: (s) => s.editTool,
    MINI_CURSOR_WRITABLE: () => (hostEnvironment({}).caches.extraWritable ?? []).join(":") || undefined,
    MINI_CURSOR_TRUST_FILE: (s) => tilde(s.trustStore),
    MINI_CURSOR_USER_CONFIG: (s) => tilde(s.mcp.userConfig),
    MINI_CURSOR_COMMANDS_DIR: (s) => tilde(s.userCommands),
    MINI_CURSOR_MCP_CACHE: (s) => tilde(s.mcp.cacheFile),
    MINI_CURSOR_MCP_START_TIMEOUT_MS: (s) => String(s.mcp.startTimeoutMs),
    MINI_CURSOR_MCP_TIMEOUT_MS: (s) => String(s.mcp.callTimeoutMs),
    MINI_CURSOR_HOOK_TIMEOUT_MS: (s) => String(s.hookTimeoutMs),
    NO_COLOR: (s) => (s.color ? undefined : "set"),
    DEBUG: (s) => (s.verbose ? "set" : undefined),
    MINI_CURSOR_SNAPSHOTS: () => onOff(snapshotsEnabled({})),
    MINI_CURSOR_SNAPSHOT_WATCH: () => onOff(snapshotWatchEnabled({})),
    MINI_CURSOR_RIPGREP: () => onOff(ripgrepAllowed({})),
    MINI_CURSOR_SNAPSHOT_WAIT_MS: () => String(snapshotWaitMs({})),
    MINI_CURSOR_STATE_HOME: () => tilde(stateHomePath({ HOME: home })),
    // readEnvironment reads .env unless MINI_CURSOR_DOTENV=off.
    MINI_CURSOR_DOTENV: () => "on",
    // scripts/studio.mjs sets these for the Studio server's request guard (studioGuardSettings).
    MINI_CURSOR_STUDIO_HOST: () => undefined,
    MINI_CURSOR_STUDIO_ORIGIN: () => undefined,
    MINI_CURSOR_FAULT_POINT: () => faultPointSetting({}),
    MINI_CURSOR_TEMPERATURE: (s) => (s.temperature === undefined ? undefined : String(s.temperature)),
    MINI_CURSOR_EXTRA_BODY: (s) => (s.extraBody ? JSON.stringify(s.extraBody) : undefined),
    MINI_CURSOR_STREAM_OPTIONS: (s) => onOff(s.streamOptions),
    MINI_CURSOR_STREAM: (s) => onOff(s.stream),
    MINI_CURSOR_ADDITIONAL_PROPERTIES: (s) => onOff(s.additionalProperties),
    MINI_CURSOR_CHECKPOINTER: (s) => s.checkpointer,
    LANGSMITH_TRACING: (s) => (s.tracing ? "on" : "off"),
    LANGSMITH_API_KEY: (s) => s.tracing?.apiKey,
    LANGSMITH_PROJECT: () => traced.tracing!.project,
    LANGSMITH_ENDPOINT: () => traced.tracing!.endpoint,
  };

  test.each(rows.map((r) => [r[0]!.replace(/`/g, ""), r[2]!] as const))("%s: default %s", (variable, cell) => {
    const compute = DEFAULTS[variable];
    if (!compute) throw new Error(`${variable} has no default computation: add it to DEFAULTS in this test`);
    const value = compute(none);
    if (value === undefined) expect(cell).toMatch(/^unset\b/);
    else if (/^the /.test(value)) expect(cell).toBe(value);
    else expect(cell.startsWith(`\`${value}\``)).toBe(true);
  });
});

/** Every `npm start -- …` or `mini-cursor …` command in the pages, as [page, line, arguments]. */
function documentedCommands(): [string, string, string[]][] {
  const found: [string, string, string[]][] = [];
  const START = /(?:^|[\s;&|(])(?:npm start --|mini-cursor)(?=\s|$)(.*)$/;
  for (const [page, text] of PAGES) {
    const candidates: string[] = [];
    let fenced = false;
    for (const line of text.split("\n")) {
      if (line.startsWith("```")) fenced = !fenced;
      else if (fenced) candidates.push(line);
      else for (const span of line.matchAll(/`([^`]+)`/g)) candidates.push(span[1]!);
    }
    for (const candidate of candidates) {
      const match = START.exec(candidate.replace(/^\$ /, ""));
      if (!match) continue;
      // A command's own words end at a comment, a pipe or a sequence (`… && next`).
      const args = shellWords(match[1]!);
      found.push([page, candidate.trim(), args]);
    }
  }
  return found;
}

/** Words of a shell command line as bash splits them, up to a comment or an operator. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  const push = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  while (i < line.length) {
    const c = line[i]!;
    if (/\s/.test(c)) {
      push();
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? line.length : end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let text = "";
      while (j < line.length && line[j] !== '"') {
        if (line[j] === "\\" && j + 1 < line.length) j++;
        text += line[j];
        j++;
      }
      word = (word ?? "") + text;
      i = j + 1;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[i + 1];
      i += 2;
    } else if ((c === "#" && word === undefined) || c === "|" || c === ";" || c === "&" || c === ")") {
      break;
    } else {
      word = (word ?? "") + c;
      i++;
    }
  }
  push();
  return words;
}

describe("every command line shown in README.md and docs/ parses with the CLI's parser", () => {
  const commands = documentedCommands();

  test("there are such lines (the extraction works)", () => {
    expect(commands.length).toBeGreaterThan(10);
    expect(commands).toContainEqual([
      "README.md",
      'npm ci && npm start -- "list the files here"',
      ["list the files here"],
    ]);
  });

  test.each(commands)("%s: %s", (_page, _line, args) => {
    const program = buildProgram("0.0.0");
    let errors = "";
    program.configureOutput({ writeErr: (t) => (errors += t), writeOut: () => {} });
    try {
      program.parse(args, { from: "user" });
    } catch (err) {
      const ok = err instanceof CommanderError && err.exitCode === 0;
      if (!ok) throw new Error(`${args.join(" ")}: ${errors || (err as Error).message}`);
    }
  });
});

test("README.md is at most 200 lines", () => {
  expect(read("README.md").split("\n").length).toBeLessThanOrEqual(201);
});

/** The fast suite's budget in minutes, as .ci/run enforces it (FAST_SUITE_BUDGET_S). */
const fastSuiteBudgetMin = Number(/^FAST_SUITE_BUDGET_S=(\d+)$/m.exec(read(".ci/run"))![1]) / 60;

test("no page states how many tests or test files there are, or how long npm test takes beyond its enforced budget", () => {
  const claims: string[] = [];
  for (const [page, text] of PAGES) {
    for (const sentence of prose(text).split(/(?<=[.!?])\s+|\n\s*\n/)) {
      if (/\b\d[\d,]*\s+(?:(?:unit |end-to-end )?tests?|test files|test suites|suites)\b/i.test(sentence))
        claims.push(`${page}: ${sentence.trim()}`);
      // The one duration allowed is the budget .ci/run holds npm test to.
      const rest = sentence.replace(/\s+/g, " ").replace(`at most ${fastSuiteBudgetMin} minutes`, "");
      if (
        /npm test|the (?:whole )?(?:test )?suite/i.test(rest) &&
        /\b\d+(?:\.\d+)?\s*(?:s|sec|seconds?|min|minutes?)\b/.test(rest)
      )
        claims.push(`${page}: ${sentence.trim()}`);
    }
  }
  expect(claims).toEqual([]);
});

test("every relative link in README.md and docs/ leads to a file that exists", () => {
  const broken: string[] = [];
  for (const [page, text] of PAGES) {
    for (const m of prose(text).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      try {
        readFileSync(path.join(PROJECT_ROOT, path.dirname(page), target));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EISDIR") broken.push(`${page}: ${target}`);
      }
    }
  }
  expect(broken).toEqual([]);
});
