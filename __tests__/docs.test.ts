/**
 * The documentation against the code: README.md and docs/ must not drift from the CLI's flags,
 * the settings and their defaults, and the command lines they show must parse.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CommanderError } from "commander";
import { buildProgram } from "../src/cli-program.js";
import { DEFAULT_TAIL_LINES, MAX_TAIL_LINES } from "../src/tools/process-output.js";
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS } from "../src/workspace/processes.js";
import { ripgrepAllowed } from "../src/tools/search-files.js";
import {
  DEFAULT_MAX_STEPS,
  defaultEditTool,
  faultPointSetting,
  hostEnvironment,
  loadSettings,
  type Settings,
  snapshotsEnabled,
  snapshotWatchEnabled,
  snapshotWaitMs,
  stateHomePath,
  studioCodesSocket,
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
  // settings.ts reads every variable but MINI_CURSOR_RIPGREP, which search_files reads from the
  // environment it is given (the one its commands get), so a test can give it another.
  const source = read("src/settings.ts") + read("src/tools/search-files.ts");
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
    MINI_CURSOR_STUDIO_CODES_SOCKET: () => studioCodesSocket({}),
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
      'npm start -- --workspace ~/hello-agent "list the files here"',
      ["--workspace", "~/hello-agent", "list the files here"],
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

/**
 * Issue 44 item 8: every default a table of the docs states is the code's. Each check below
 * names the rows it covers; the last test fails on a row that says "default" and no check covers,
 * so a default added to a table is checked or the test says where.
 */
describe("every default stated in a docs table is the code's", () => {
  const base = { MINI_CURSOR_DOTENV: "off", HOME: "/home/someone", INIT_CWD: "/tmp" };
  const none = loadSettings({}, base);
  /** [page, first cell] of every row a check covered. */
  const covered = new Set<string>();
  const cover = (page: string, row: string[]) => covered.add(`${page}\u0000${row[0]}`);
  /** Every table row of a page (header and separator rows left out), as cells. */
  const allRows = (text: string): string[][] => {
    const out: string[][] = [];
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      if (!line.startsWith("|") || /^\|[\s|:-]+\|$/.test(line)) return;
      // A header is the row above a separator.
      if (/^\|[\s|:-]+\|$/.test(lines[i + 1] ?? "")) return;
      out.push(
        line
          .replace(/\\\|/g, "\u0000")
          .split("|")
          .slice(1, -1)
          .map((c) => c.replace(/\u0000/g, "|").trim()),
      );
    });
    return out;
  };

  test("docs/studio.md: what each field is when left empty", () => {
    const page = "docs/studio.md";
    const fields: Record<string, { variable: string; value: string }> = {
      model: { variable: "MINI_CURSOR_MODEL", value: `\`${none.model}\`` },
      workspace: { variable: "MINI_CURSOR_WORKSPACE", value: "the folder `npm run studio` ran in" },
      approval: { variable: "MINI_CURSOR_APPROVAL", value: `\`${none.approval}\`` },
      maxSteps: { variable: "MINI_CURSOR_MAX_STEPS", value: String(none.maxSteps) },
    };
    const rows = tableRows(read(page), "field");
    expect(rows.map((r) => r[0]!.replace(/`/g, ""))).toEqual(Object.keys(fields));
    for (const row of rows) {
      const field = fields[row[0]!.replace(/`/g, "")]!;
      expect([row[0], row[2]]).toEqual([row[0], `\`${field.variable}\`, else ${field.value}`]);
      cover(page, row);
    }
  });

  /** A flag's default as the code has it, in the words a table or --help uses. */
  const FLAG_DEFAULTS: Record<string, string> = {
    "--max-steps": String(DEFAULT_MAX_STEPS),
    "--approval": none.approval,
    "--sandbox": none.sandbox,
    "--engine": none.engine,
  };
  /** `(default X)` and `` `X` (default`` in a text: the defaults it states. */
  const statedDefaults = (text: string) => [
    ...[...text.matchAll(/\(default:? ([^),;]+)[),;]/g)].map((m) => m[1]!.replace(/`/g, "").trim()),
    ...[...text.matchAll(/`([^`]+)` \(default\b/g)].map((m) => m[1]!),
  ];

  test("docs/usage.md's flag table and --help: each flag's stated default", () => {
    const page = "docs/usage.md";
    for (const row of tableRows(read(page), "flag")) {
      const stated = statedDefaults(row[1]!);
      if (stated.length === 0) continue;
      const flag = row[0]!.match(/--[a-z-]+/)![0];
      const expected = flag === "--workspace" ? "the directory you ran the command from" : FLAG_DEFAULTS[flag];
      expect([flag, stated]).toEqual([flag, [expected]]);
      cover(page, row);
    }
    const program = buildProgram("0.0.0");
    for (const option of program.options) {
      const stated = statedDefaults(option.description);
      if (stated.length === 0) continue;
      const flag = option.long!;
      const expected = flag === "--workspace" ? "the directory you ran the command from" : FLAG_DEFAULTS[flag];
      expect([flag, stated]).toEqual([flag, [expected]]);
    }
  });

  test("README.md and docs/safety.md: the approval table marks the default mode", () => {
    for (const page of ["README.md", "docs/safety.md"]) {
      const rows = tableRows(read(page), "mode");
      const marked = rows.filter((r) => /\(default\)/.test(r[0]!));
      expect(marked.map((r) => r[0])).toEqual([`\`${none.approval}\` (default)`]);
      for (const row of marked) cover(page, row);
    }
  });

  test("docs/configuration.md: the variables' table (checked above) and the provider named as the default model", () => {
    const page = "docs/configuration.md";
    for (const row of tableRows(read(page), "variable")) cover(page, row);
    const providers = allRows(read(page)).filter((r) => r.some((c) => /the default model/.test(c)) && r.length === 3);
    expect(providers.length).toBeGreaterThan(0);
    for (const row of providers) {
      expect(row[1]).toContain(`MINI_CURSOR_MODEL=${none.model}\``);
      cover(page, row);
    }
  });

  test("docs/tools-and-mcp.md: the tools' defaults", () => {
    const page = "docs/tools-and-mcp.md";
    const rows = tableRows(read(page), "tool");
    const row = (name: string) => rows.find((r) => r[0] === `\`${name}\``)!;
    expect(row("execute_command")[2]).toContain(
      `Timeout ${DEFAULT_TIMEOUT_MS / 1000} s by default, up to ${MAX_TIMEOUT_MS / 1000} s`,
    );
    expect(row("process_output")[2]).toContain(`(default ${DEFAULT_TAIL_LINES}, at most ${MAX_TAIL_LINES})`);
    // "by default GPT-4.1, GPT-5, o3 and o4 get it": apply_patch with edit_file, and no other model.
    expect(row("apply_patch")[2]).toContain("by default GPT-4.1, GPT-5, o3 and o4 get it next to `edit_file`");
    for (const model of ["gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "o3", "o4-mini"])
      expect([model, defaultEditTool(model)]).toEqual([model, "both"]);
    for (const model of ["gpt-4o", "gpt-4o-mini", "deepseek-chat", "qwen2.5-coder:7b"])
      expect([model, defaultEditTool(model)]).toEqual([model, "edit_file"]);
    for (const name of ["execute_command", "process_output", "apply_patch"]) cover(page, row(name));
  });

  test("evals/README.md: npm run eval's flags and a task's fields", () => {
    const page = "evals/README.md";
    const evalSource = read("scripts/eval.ts");
    const runnerSource = read("scripts/eval-runner.ts");
    const constant = (source: string, name: string) => new RegExp(`const ${name} = ([^;]+);`).exec(source)?.[1]?.trim();
    const flags = tableRows(read(page), "flag");
    const flagRow = (flag: string) => flags.find((r) => r[0]!.includes(flag))!;
    const repeat = /\.option\("--repeat <n>", "[^"]*", "(\d+)"\)/.exec(evalSource)?.[1];
    expect(statedDefaults(flagRow("--repeat")[1]!)).toEqual([repeat]);
    expect(evalSource).toMatch(/\.option\("--concurrency <n>", "[^"]*", String\(DEFAULT_CONCURRENCY\)\)/);
    expect(statedDefaults(flagRow("--concurrency")[1]!)).toEqual([constant(evalSource, "DEFAULT_CONCURRENCY")]);
    const engine = /new Option\("--engine <name>"[^\n]*\.default\("(\w+)"\)/.exec(evalSource)?.[1];
    expect(statedDefaults(flagRow("--engine")[1]!)).toEqual([engine]);
    expect(flagRow("--model")[1]).toContain("(default `MINI_CURSOR_MODEL`)");
    for (const flag of ["--repeat", "--concurrency", "--engine", "--model"]) cover(page, flagRow(flag));

    const fields = tableRows(read(page), "field");
    const fieldRow = (name: string) => fields.find((r) => r[0]!.includes(`\`${name}\``))!;
    expect(statedDefaults(fieldRow("approval")[1]!)).toEqual([JSON.parse(constant(runnerSource, "DEFAULT_APPROVAL")!)]);
    expect(constant(runnerSource, "DEFAULT_RUN_TIMEOUT_MS")).toBe("10 * 60_000");
    expect(fieldRow("timeoutMs")[1]).toContain("(default 10 minutes; the CLI's step limit)");
    expect(statedDefaults(fieldRow("expect")[1]!)).toEqual(["done"]);
    for (const name of ["approval", "timeoutMs", "expect"]) cover(page, fieldRow(name));
  });

  /** Rows that say "default" without stating one, and why. */
  const NOT_A_DEFAULT: Record<string, string> = {
    "README.md\u0000[docs/configuration.md](docs/configuration.md)": "the index of the docs, naming a page",
    "docs/ARCHITECTURE.md\u00001": "the layer of settings.ts, which reads defaults",
    "docs/configuration.md\u0000Azure OpenAI": "`MINI_CURSOR_TEMPERATURE=default` is a value to set",
  };

  test("no row of a table says 'default' without a check above", () => {
    const unchecked: string[] = [];
    for (const [page, text] of PAGES) {
      for (const row of allRows(text)) {
        if (!row.some((c) => /\bdefault\b/i.test(c))) continue;
        const key = `${page}\u0000${row[0]}`;
        if (!covered.has(key) && !(key in NOT_A_DEFAULT)) unchecked.push(`${page}: ${row[0]}`);
      }
    }
    expect(unchecked).toEqual([]);
  });
});
