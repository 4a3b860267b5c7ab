import { configureParts } from "../src/app/configure.js";
/**
 * One memory-sensitive measurement in its own process (peak RSS is per process):
 *   read-tail <file> <lines>   read_file of the last 20 lines of a huge file
 *   flood <workspace>  execute_command printing 1 GB
 *   baseline <dir>     the same imports and toolset, doing nothing (the memory floor)
 * Prints one JSON line: { ms, peakRssBytes, baselineRssBytes, detail }.
 */
import path from "node:path";
import { createTools } from "../src/tools/index.js";
import { peakRssBytes } from "./peak-rss.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

async function main(): Promise<void> {
  const [kind, arg, extra] = process.argv.slice(2);
  if (!kind || !arg) throw new Error("usage: bench-probe <read-tail|flood|baseline> <path>");
  const workspace = kind === "read-tail" ? path.dirname(arg) : arg;
  const tools = createTools({ workspace });
  const baselineRssBytes = process.memoryUsage().rss;
  const started = performance.now();
  let detail = "";
  if (kind === "read-tail") {
    const total = Number(extra);
    const text = String(
      await tools.read_file.invoke({ filePath: path.basename(arg), offset: Math.max(1, total - 19), limit: 20 }),
    );
    detail = text.split("\n").at(-1) ?? "";
  } else if (kind === "flood") {
    const text = String(
      await tools.execute_command.invoke({
        command: "yes 'mini-cursor flood line' | head -c 1000000000",
        timeoutMs: 600_000,
      }),
    );
    detail = text.split("\n").find((l) => l.includes("omitted")) ?? text.split("\n")[0]!;
  }
  const ms = performance.now() - started;
  await tools.processes.stopAll();
  process.stdout.write(`${JSON.stringify({ ms, peakRssBytes: peakRssBytes(), baselineRssBytes, detail })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    process.exit(1);
  },
);
