import { configureParts } from "../src/app/configure.js";
/**
 * One scale measurement in a process of its own (peak RSS is per process):
 *   edit-big <workspace> <file> <word>   read_file, then edit_file of the line holding <word>
 *   patch-big <workspace> <file> <word>  read_file, then apply_patch of that line, back from "edited" to "reached"
 * Prints one JSON line: { ms, peakRssBytes, baselineRssBytes, detail } or { error }.
 */
import { createTools } from "../src/tools/index.js";
import { peakRssBytes } from "./peak-rss.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/** The big file's line holding `word` (bench-scale-lib.ts writes it) and what the edit makes of it. */
const bigLine = (word: string, state: string) => `2026-12-01T12:00:00Z ERROR ${word} ${state}`;

async function main(): Promise<void> {
  const [kind, workspace, file, word] = process.argv.slice(2);
  if ((kind !== "edit-big" && kind !== "patch-big") || !workspace || !file || !word)
    throw new Error("usage: bench-scale-probe edit-big|patch-big <workspace> <file> <word>");
  const tools = createTools({ workspace, editTool: "both" });
  const baselineRssBytes = process.memoryUsage().rss;
  const started = performance.now();
  await tools.read_file.invoke({ filePath: file });
  const detail =
    kind === "edit-big"
      ? String(
          await tools.edit_file.invoke({ filePath: file, oldString: `${word} reached`, newString: `${word} edited` }),
        )
      : String(
          await tools.apply_patch.invoke({
            input: [
              "*** Begin Patch",
              `*** Update File: ${file}`,
              "@@",
              `-${bigLine(word, "edited")}`,
              `+${bigLine(word, "reached")}`,
              "*** End Patch",
            ].join("\n"),
          }),
        );
  const ms = performance.now() - started;
  if (!/^(Edited|Applied)/.test(detail)) throw new Error(detail.slice(0, 300));
  process.stdout.write(
    `${JSON.stringify({ ms, peakRssBytes: peakRssBytes(), baselineRssBytes, detail: detail.slice(0, 200) })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message.split("\n")[0] })}\n`);
    process.exit(1);
  },
);
