import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { agentTypeFromFile, loadAgentCatalog, parseAgentFile } from "../../src/context/agent-files.js";
import { contentHash, trustFile } from "../../src/security/trust.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

test("Claude Code's agent file format: front matter fields, tools as a list, Claude's tool names read as ours", () => {
  const text =
    "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, Glob\nmodel: inherit\ncolor: blue\n---\nReview carefully.\n";
  expect(agentTypeFromFile(text, "/x/reviewer.md", "user")).toEqual({
    type: {
      name: "reviewer",
      description: "Reviews code",
      tools: ["read_file", "search_files", "find_files"],
      instructions: "Review carefully.",
      source: "user",
      file: "/x/reviewer.md",
    },
    warnings: [],
  });
  expect(parseAgentFile("---\ntools:\n  - read_file\n  - 'list_directory'\n---\nbody")).toEqual({
    fields: { tools: ["read_file", "list_directory"] },
    body: "body",
  });
  expect(agentTypeFromFile("no front matter", "/x/a.md", "user")).toEqual({
    problem: "no front matter (a --- block with name and description)",
  });
  expect(agentTypeFromFile("---\nname: Bad Name\ndescription: d\n---\n", "/x/a.md", "user")).toEqual({
    problem: 'name "Bad Name" is not lowercase letters, digits, - or _',
  });
});

test("the person's agents load; the repository's only once trusted, and never under a name already taken", () => {
  const user = path.join(tmp.dir, "user-agents");
  const ws = path.join(tmp.dir, "ws");
  const store = path.join(tmp.dir, "trust.json");
  mkdirSync(user);
  mkdirSync(path.join(ws, ".mini-cursor", "agents"), { recursive: true });
  writeFileSync(path.join(user, "mine.md"), "---\nname: mine\ndescription: Mine\n---\nBody\n");
  const repo = path.join(ws, ".mini-cursor", "agents", "theirs.md");
  const repoText = "---\nname: theirs\ndescription: Theirs\n---\nBody\n";
  writeFileSync(repo, repoText);
  const shadow = path.join(ws, ".mini-cursor", "agents", "general.md");
  writeFileSync(shadow, "---\nname: general\ndescription: Replaced\n---\n");
  symlinkSync("/etc/passwd", path.join(ws, ".mini-cursor", "agents", "link.md"));

  const before = loadAgentCatalog({ workspace: ws, agentsDir: user, trustStore: store });
  expect(before.types.map((t) => `${t.name}:${t.source}`)).toEqual([
    "explore:built-in",
    "general:built-in",
    "mine:user",
  ]);
  expect(before.untrusted.map((u) => u.name)).toEqual(["general", "theirs"]);
  expect(before.problems).toEqual([
    { file: path.join(ws, ".mini-cursor", "agents", "link.md"), problem: "not a regular file" },
  ]);

  trustFile(store, repo, contentHash(repoText));
  trustFile(store, shadow, contentHash("---\nname: general\ndescription: Replaced\n---\n"));
  const after = loadAgentCatalog({ workspace: ws, agentsDir: user, trustStore: store });
  expect(after.types.map((t) => `${t.name}:${t.source}`)).toEqual([
    "explore:built-in",
    "general:built-in",
    "mine:user",
    "theirs:project",
  ]);
  expect(after.problems.map((p) => p.problem)).toContain("an agent named general already exists");
  // An edit after trust makes it untrusted again.
  writeFileSync(repo, `${repoText}more\n`);
  expect(loadAgentCatalog({ workspace: ws, agentsDir: user, trustStore: store }).untrusted.map((u) => u.name)).toEqual([
    "theirs",
  ]);
});

const agent = (tools: string, extra = "") => `---\nname: a\ndescription: d\ntools: ${tools}\n${extra}---\nBody\n`;
const read = (text: string) => {
  const r = agentTypeFromFile(text, "/x/a.md", "user");
  if ("problem" in r) throw new Error(r.problem);
  return { tools: r.type.tools, disallowed: r.type.disallowedTools, warnings: r.warnings };
};

test("a tool list is never widened: a Bash pattern drops Bash, tools we lack are left out, each said", () => {
  expect(read(agent("Read, Bash(git status:*), Bash(git diff:*, git log:*)"))).toEqual({
    tools: ["read_file"],
    disallowed: undefined,
    warnings: [
      "tools: Bash(git status:*), Bash(git diff:*, git log:*) cannot be limited to those uses here, so the agent does not get Bash at all",
    ],
  });
  expect(read(agent("WebFetch, WebSearch"))).toEqual({
    tools: [],
    disallowed: undefined,
    warnings: [
      "tools: WebFetch, WebSearch are tools mini-cursor does not have; left out",
      "so this agent has no tools at all: it can only answer from its brief",
    ],
  });
  // Claude Code's MCP names are ours without `mcp__`; BashOutput and KillShell are ours too.
  expect(read(agent("mcp__github__search, BashOutput, KillShell, NotebookEdit"))).toEqual({
    tools: ["github__search", "process_output", "stop_process"],
    disallowed: undefined,
    warnings: ["tools: NotebookEdit is a tool mini-cursor does not have; left out"],
  });
  // Taking away with a pattern takes the whole tool away: the safe side.
  expect(read(agent("Read, Bash", "disallowedTools: Bash(rm:*)\n"))).toEqual({
    tools: ["read_file", "execute_command"],
    disallowed: ["execute_command"],
    warnings: [],
  });
});

test("Claude Code's folders: ~/.claude/agents is the person's, .claude/agents the repository's (trusted), first wins", () => {
  const claudeHome = path.join(tmp.dir, "claude-home");
  const ws = path.join(tmp.dir, "ws");
  const store = path.join(tmp.dir, "trust.json");
  mkdirSync(path.join(claudeHome, "agents"), { recursive: true });
  mkdirSync(path.join(ws, ".claude", "agents"), { recursive: true });
  mkdirSync(path.join(ws, ".mini-cursor", "agents"), { recursive: true });
  writeFileSync(path.join(claudeHome, "agents", "helper.md"), agent("Read, WebSearch"));
  const same = "---\nname: reviewer\ndescription: d\n---\nB\n";
  const ours = path.join(ws, ".mini-cursor", "agents", "reviewer.md");
  const theirs = path.join(ws, ".claude", "agents", "reviewer.md");
  writeFileSync(ours, same);
  writeFileSync(theirs, same);
  const options = { workspace: ws, agentsDir: path.join(tmp.dir, "none"), claudeHome, trustStore: store };
  const before = loadAgentCatalog(options);
  expect(before.types.map((t) => `${t.name}:${t.source}`)).toEqual(["explore:built-in", "general:built-in", "a:user"]);
  expect(before.warnings).toEqual([
    {
      file: path.join(claudeHome, "agents", "helper.md"),
      problem: "tools: WebSearch is a tool mini-cursor does not have; left out",
    },
  ]);
  expect(before.untrusted.map((u) => u.file)).toEqual([ours, theirs]);
  trustFile(store, ours, contentHash(same));
  trustFile(store, theirs, contentHash(same));
  const after = loadAgentCatalog(options);
  expect(after.types.map((t) => `${t.name}:${t.file}`).slice(3)).toEqual([`reviewer:${ours}`]);
  expect(after.problems).toEqual([{ file: theirs, problem: "an agent named reviewer already exists" }]);
});

test("a repository's .claude that is a symlink is not read", () => {
  const ws = path.join(tmp.dir, "ws");
  const elsewhere = path.join(tmp.dir, "elsewhere");
  mkdirSync(path.join(elsewhere, "agents"), { recursive: true });
  mkdirSync(ws);
  writeFileSync(path.join(elsewhere, "agents", "x.md"), "---\nname: x\ndescription: d\n---\n");
  symlinkSync(elsewhere, path.join(ws, ".claude"));
  const r = loadAgentCatalog({
    workspace: ws,
    agentsDir: path.join(tmp.dir, "none"),
    trustStore: path.join(tmp.dir, "t"),
  });
  expect(r.untrusted).toEqual([]);
  expect(r.problems).toEqual([
    {
      file: path.join(ws, ".claude", "agents"),
      problem: `${path.join(ws, ".claude")} is a symlink, and must be a plain folder`,
    },
  ]);
});

test("a Claude model id in an agent file is Claude Code's: the session's model runs it, and the warning says so", () => {
  const r = agentTypeFromFile(agent("Read", "model: claude-sonnet-4-5-20250929\n"), "/x/a.md", "user");
  if ("problem" in r) throw new Error(r.problem);
  expect([r.type.model, r.warnings]).toEqual([
    undefined,
    ["model claude-sonnet-4-5-20250929 is Claude Code's: this sub-agent uses the session's model"],
  ]);
  const own = agentTypeFromFile(agent("Read", "model: gpt-5-mini\n"), "/x/a.md", "user");
  if ("problem" in own) throw new Error(own.problem);
  expect([own.type.model, own.warnings]).toEqual(["gpt-5-mini", []]);
});
