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
