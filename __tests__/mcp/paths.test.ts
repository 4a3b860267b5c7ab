import { mcpCallPaths, pathArgumentsOf } from "../../src/mcp/paths.js";
import { accessOf } from "../../src/agent/dispatch.js";
import { declared } from "../../src/contracts/tools.js";

describe("the paths an MCP tool's call touches", () => {
  test("are the top-level string (or string array) arguments with a path name", () => {
    expect(
      pathArgumentsOf({
        type: "object",
        properties: {
          path: { type: "string" },
          paths: { type: "array", items: { type: "string" } },
          source: { type: "string" },
          destination: { type: "string" },
          file: { type: "number" },
          filename: { type: "array", items: { type: "number" } },
          query: { type: "string" },
          target: { type: "string" },
          file_path: { type: "string" },
          targetPath: { type: "string" },
          output_dir: { type: "string" },
          waitFor: { type: "string" },
          content: { type: "string" },
        },
      }),
    ).toEqual(["path", "paths", "source", "destination", "target", "file_path", "targetPath", "output_dir"]);
    expect(pathArgumentsOf({ type: "object" })).toEqual([]);
    expect(pathArgumentsOf(undefined)).toEqual([]);
  });

  test("are what a call gives in those arguments; none given: it may touch anything", () => {
    const tools = [
      declared({ name: "fs__move" }, { paths: { source: "path", destination: "path" } }),
      declared({ name: "fs__read_many" }, { paths: { paths: "path" } }),
      { name: "web__fetch" },
    ];
    expect(mcpCallPaths({ name: "fs__move", args: { source: "a.txt", destination: "b/a.txt" } }, tools)).toEqual([
      "a.txt",
      "b/a.txt",
    ]);
    expect(mcpCallPaths({ name: "fs__read_many", args: { paths: ["a", 3, "", "b"] } }, tools)).toEqual(["a", "b"]);
    expect(mcpCallPaths({ name: "fs__move", args: {} }, tools)).toBeUndefined();
    expect(mcpCallPaths({ name: "web__fetch", args: { url: "x" } }, tools)).toBeUndefined();
    expect(mcpCallPaths({ name: "other", args: { path: "a" } }, tools)).toBeUndefined();
  });

  test("schedule the call like a built-in one: by those paths, from the workspace root", () => {
    const tools = [
      declared({ name: "fs__write", metadata: { mcpServer: "fs", mcpTool: "write" } }, { paths: { path: "path" } }),
    ];
    const call = (args: Record<string, unknown>) => ({ id: "c", name: "fs__write", args });
    expect(accessOf(call({ path: "src/a.ts" }), tools, "/ws")).toEqual({ writes: true, paths: ["/ws/src/a.ts"] });
    expect(accessOf(call({ path: "/elsewhere/a.ts" }), tools, "/ws")).toEqual({
      writes: true,
      paths: ["/elsewhere/a.ts"],
    });
    expect(accessOf(call({}), tools, "/ws")).toEqual({ writes: true, paths: undefined });
  });
});
