/**
 * One scale measurement in a process of its own (peak RSS is per process):
 *   edit-big <workspace> <file> <word>   read_file, then edit_file of the line holding <word>
 * Prints one JSON line: { ms, peakRssBytes, baselineRssBytes, detail } or { error }.
 */
import { createTools } from "../src/tools/index.js";

async function main(): Promise<void> {
  const [kind, workspace, file, word] = process.argv.slice(2);
  if (kind !== "edit-big" || !workspace || !file || !word)
    throw new Error("usage: bench-scale-probe edit-big <workspace> <file> <word>");
  const tools = createTools({ workspace });
  const baselineRssBytes = process.memoryUsage().rss;
  const started = performance.now();
  await tools.read_file.invoke({ filePath: file });
  const detail = String(
    await tools.edit_file.invoke({ filePath: file, oldString: `${word} reached`, newString: `${word} edited` }),
  );
  const ms = performance.now() - started;
  if (!detail.includes("edited")) throw new Error(detail.slice(0, 300));
  process.stdout.write(
    `${JSON.stringify({ ms, peakRssBytes: process.resourceUsage().maxRSS * 1024, baselineRssBytes, detail: detail.slice(0, 200) })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message.split("\n")[0] })}\n`);
    process.exit(1);
  },
);
