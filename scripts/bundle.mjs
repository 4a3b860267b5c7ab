// `npm run build`, second half: dist/cli.bundle.cjs, the CLI and its JavaScript dependencies in one
// file. Loading one file instead of a few thousand modules halves the time to the first model
// request (BENCHMARKS.md). CommonJS, so scripts/start.mjs can compile it with a V8 code cache on
// Node 20 as well (vm.Script cachedData; ES modules have no such hook there). Native and WASM
// packages stay outside: they locate files next to themselves.
import { readFileSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

await build({
  entryPoints: ["src/cli.ts"],
  outfile: "dist/cli.bundle.cjs",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // The MCP libraries load only when MCP servers are configured (src/mcp/libraries.ts).
  external: [
    "better-sqlite3",
    "web-tree-sitter",
    "tree-sitter-bash",
    "@langchain/mcp-adapters",
    "@modelcontextprotocol/sdk",
    "@modelcontextprotocol/sdk/*",
  ],
  // The sources are ES modules that find files from import.meta.url: give them the bundle's.
  define: { "import.meta.url": "__bundleUrl" },
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: "warning",
});

// Pure ASCII, so Node reads the bundle into a one-byte string and V8 scans it as one: a single
// non-ASCII character (esbuild escapes strings, not regular expression literals or comments)
// makes reading it as UTF-8 a slow two-byte decode of ~20–40 ms at every launch (BENCHMARKS.md).
// A \uXXXX escape means the same code unit in a regular expression (and in a `u` one a
// surrogate pair still makes one code point); in a comment it changes nothing.
const bundlePath = "dist/cli.bundle.cjs";
const bundled = readFileSync(bundlePath, "utf8");
if (/\\[^\x00-\x7f]/.test(bundled)) throw new Error(`${bundlePath}: a backslash before a non-ASCII character`);
writeFileSync(
  bundlePath,
  bundled.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
);
