import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "./cli.js";

/**
 * Every route the LangGraph dev server (`@langchain/langgraph-api`, which `langgraphjs dev`
 * runs) answers, read from the installed package rather than listed by hand, so a route a new
 * version adds is attacked too: the Hono apps of its `api/` and `ui/` modules (their `.routes`),
 * and the routes server.mjs registers on the main app itself (`/internal/truncate`).
 */

export interface DevServerRoute {
  method: string;
  path: string;
}

function apiDir(): string {
  const candidates = [
    path.join(PROJECT_ROOT, "node_modules/@langchain/langgraph-cli/node_modules/@langchain/langgraph-api/dist"),
    path.join(PROJECT_ROOT, "node_modules/@langchain/langgraph-api/dist"),
  ];
  const found = candidates.find((dir) => existsSync(path.join(dir, "server.mjs")));
  if (!found) throw new Error(`@langchain/langgraph-api is not installed where expected: ${candidates.join(", ")}`);
  return found;
}

const LIST_ROUTES = `
const dir = process.argv[1];
const routes = [];
for (const f of ["meta", "assistants", "runs", "threads", "store"]) {
  const m = await import(dir + "/api/" + f + ".mjs");
  routes.push(...m.default.routes);
}
const protocol = await import(dir + "/api/protocol.mjs");
routes.push(...protocol.default(() => () => undefined, {}).routes);
const ui = await import(dir + "/ui/load.mjs");
routes.push(...ui.api.routes);
console.log(JSON.stringify(routes.filter((r) => r.method !== "ALL").map((r) => ({ method: r.method, path: r.path }))));
process.exit(0);
`;

/**
 * Asynchronous on purpose: a test's HTTP client keeps idle connections, and an event loop
 * blocked while the server closes one would send the next request into the closed socket.
 */
export async function devServerRoutes(): Promise<DevServerRoute[]> {
  const dir = apiDir();
  const listed = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", LIST_ROUTES, dir], {
    encoding: "utf8",
    timeout: 60_000,
  });
  const routes = JSON.parse(listed.stdout.trim().split("\n").at(-1)!) as DevServerRoute[];
  const server = readFileSync(path.join(dir, "server.mjs"), "utf8");
  for (const m of server.matchAll(/\bapp\.(get|post|put|patch|delete)\(\s*"([^"]+)"/g))
    routes.push({ method: m[1]!.toUpperCase(), path: m[2]! });
  const seen = new Set<string>();
  return routes.filter((r) => {
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A route's path with its parameters filled in (`:thread_id` → ids.thread_id; optional ones left out). */
export function fillRoute(route: string, ids: Record<string, string>): string {
  return route
    .replace(/\/:([a-z_]+)\?/g, (_, name: string) => (ids[name] ? `/${ids[name]}` : ""))
    .replace(/:([a-z_]+)/g, (_, name: string) => ids[name] ?? "00000000-0000-4000-8000-000000000000");
}
