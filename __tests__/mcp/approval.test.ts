import { restartSettings } from "../helpers/start.js";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { classifyCall, deniedMessage } from "../../src/policy/approval.js";
import { mcpNeedsApproval } from "../../src/mcp/approval.js";
import { EMPTY_MCP_RULES } from "../../src/security/mcp-config.js";
import { contentHash, trustFile } from "../../src/security/trust.js";
import { trustStorePath } from "../../src/settings.js";
import { engineHarness, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

let ws: ReturnType<typeof makeTempDir>;
let home: ReturnType<typeof makeTempDir>;
const saved = { ...process.env };

beforeEach(() => {
  ws = makeTempDir();
  home = makeTempDir();
  // The approval decision reads the user's config file and the trust store through settings.ts.
  process.env.MINI_CURSOR_USER_CONFIG = path.join(home.dir, "config.json");
  process.env.MINI_CURSOR_TRUST_FILE = path.join(home.dir, "trusted.json");
  restartSettings();
});
afterEach(() => {
  process.env = { ...saved };
  restartSettings();
  ws.cleanup();
  home.cleanup();
});

const readOnly = { mcpServer: "docs", annotations: { readOnlyHint: true } };
const writes = { mcpServer: "docs", annotations: { readOnlyHint: false } };

describe("mcpNeedsApproval", () => {
  test.each([
    // mode, always, rules, tool metadata -> asks?
    ["suggest", [], EMPTY_MCP_RULES, undefined, true],
    ["auto-edit", [], EMPTY_MCP_RULES, undefined, true],
    ["full-auto", [], EMPTY_MCP_RULES, undefined, false],
    ["auto-edit", [], { allow: ["docs"], trustReadOnlyHints: false }, undefined, false],
    ["auto-edit", [], { allow: ["docs__search"], trustReadOnlyHints: false }, undefined, false],
    ["auto-edit", [], { allow: ["docs__other"], trustReadOnlyHints: false }, undefined, true],
    ["auto-edit", [], { allow: ["doc"], trustReadOnlyHints: false }, undefined, true],
    ["auto-edit", ["docs__search"], EMPTY_MCP_RULES, undefined, false],
    // A read-only hint counts only where the user opted in.
    ["auto-edit", [], EMPTY_MCP_RULES, readOnly, true],
    ["auto-edit", [], { allow: [], trustReadOnlyHints: true }, readOnly, false],
    ["suggest", [], { allow: [], trustReadOnlyHints: ["docs"] }, readOnly, false],
    ["auto-edit", [], { allow: [], trustReadOnlyHints: ["other"] }, readOnly, true],
    ["auto-edit", [], { allow: [], trustReadOnlyHints: true }, writes, true],
    ["auto-edit", [], { allow: [], trustReadOnlyHints: true }, undefined, true],
  ] as const)("%s, always %j, rules %j, tool %j: asks %s", (mode, always, rules, meta, asks) => {
    const reason = mcpNeedsApproval(
      { name: "docs__search" },
      mode,
      always,
      { allow: [...rules.allow], trustReadOnlyHints: rules.trustReadOnlyHints as boolean | string[] },
      meta,
    );
    expect(reason !== null).toBe(asks);
    if (asks)
      expect(reason).toBe(
        `calls a tool of MCP server "docs", which can do anything that server can (approval mode ${mode})`,
      );
  });
});

describe("classifyCall for MCP tools", () => {
  const call = { name: "docs__search", args: { q: "x" } };
  const projectFile = () => path.join(ws.dir, "mini-cursor.config.json");
  const tools = [
    { name: "docs__search", metadata: { mcpServer: "docs", mcpTool: "search", annotations: { readOnlyHint: true } } },
  ];

  test("asks in auto-edit with no rule; the 'always' key is the tool", async () => {
    expect(await classifyCall(call, "auto-edit", [], { workspace: ws.dir, tools })).toEqual({
      action: "ask",
      reason: 'calls a tool of MCP server "docs", which can do anything that server can (approval mode auto-edit)',
      alwaysAsks: false,
      alwaysKeys: ["docs__search"],
    });
  });

  test("a committed allow rule counts only once the file is trusted", async () => {
    writeFileSync(projectFile(), JSON.stringify({ mcp: { allow: ["docs"] } }));
    expect((await classifyCall(call, "auto-edit", [], { workspace: ws.dir, tools })).action).toBe("ask");
    trustFile(trustStorePath(), projectFile(), contentHash(readFileSync(projectFile(), "utf8")));
    expect((await classifyCall(call, "auto-edit", [], { workspace: ws.dir, tools })).action).toBe("run");
  });

  test("the user's own config may trust read-only hints", async () => {
    writeFileSync(path.join(home.dir, "config.json"), JSON.stringify({ mcp: { trustReadOnlyHints: true } }));
    expect((await classifyCall(call, "suggest", [], { workspace: ws.dir, tools })).action).toBe("run");
    // Without the toolset the hint is unknown: it asks.
    expect((await classifyCall(call, "suggest", [], { workspace: ws.dir })).action).toBe("ask");
  });

  test("declined without a terminal: the hint names the MCP allow rule", () => {
    expect(
      deniedMessage(
        "docs__search",
        { decision: "deny", unattended: true },
        { alwaysAsks: false, mode: "auto-edit", reason: "r" },
      ),
    ).toContain(
      'Add "docs__search" (or its server) to "mcp": { "allow": [...] } in the rules file, or run mini-cursor with --approval full-auto',
    );
  });
});

describe.each<EngineKind>(["graph", "loop"])("MCP approvals in the %s engine", (kind) => {
  test("an MCP tool asks in auto-edit; 'always' covers it for the thread", async () => {
    let runs = 0;
    const search = tool(async ({ q }) => `found ${q} (${++runs})`, {
      name: "docs__search",
      description: "Searches the docs.",
      schema: z.object({ q: z.string() }),
      metadata: { mcpServer: "docs", mcpTool: "search" },
    });
    const h = engineHarness(
      kind,
      ws.dir,
      [
        { toolCalls: [{ name: "docs__search", args: { q: "a" } }] },
        { toolCalls: [{ name: "docs__search", args: { q: "b" } }] },
        "done",
      ],
      { approval: "auto-edit" },
      { tools: [search], defaultAnswer: { decision: "always" } },
    );
    expect((await h.run("search")).reason).toBe("done");
    expect(h.approvals.map((a) => [a.tool, a.reason])).toEqual([
      [
        "docs__search",
        'calls a tool of MCP server "docs", which can do anything that server can (approval mode auto-edit)',
      ],
    ]);
    expect(eventsOf(h.events, "tool_result").map((e) => e.name)).toEqual(["docs__search", "docs__search"]);
    expect(runs).toBe(2);
  });
});
