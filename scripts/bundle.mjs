// `npm run build`, second half: dist/cli.bundle.js, the CLI and its JavaScript dependencies in one
// file. Loading one file instead of a few thousand modules halves the time to the first model
// request (BENCHMARKS.md). Native and WASM packages stay outside: they locate files next to
// themselves.
import { build } from "esbuild";

await build({
  entryPoints: ["src/cli.ts"],
  outfile: "dist/cli.bundle.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // The MCP libraries load only when MCP servers are configured (src/mcp/libraries.ts).
  external: ["better-sqlite3", "web-tree-sitter", "tree-sitter-bash", "@langchain/mcp-adapters", "@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*"],
  // Bundled CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  logLevel: "warning",
});
