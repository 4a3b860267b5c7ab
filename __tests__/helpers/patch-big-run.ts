import { configureParts } from "../../src/app/configure.js";
import { readFileSync } from "node:fs";
import { createTools } from "../../src/tools/index.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/**
 * apply_patch of a big file in a process of its own (peak RSS is per process): reads <file>'s
 * first line, applies the patch in <patch file>, prints { result, rssGrowthBytes } as JSON.
 */
const [workspace, file, patchFile] = process.argv.slice(2) as [string, string, string];
const tools = createTools({ workspace, env: { PATH: "/nonexistent" } });
const config = { configurable: { thread_id: "big" } };
await tools.read_file.invoke({ filePath: file, limit: 1 }, config);
const baseline = process.memoryUsage().rss;
const result = String(await tools.apply_patch.invoke({ input: readFileSync(patchFile, "utf8") }, config));
const peak = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify({ result, rssGrowthBytes: peak - baseline }));
