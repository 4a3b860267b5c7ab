import { configureParts } from "../../src/app/configure.js";
import { createTools } from "../../src/tools/index.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/**
 * Runs search_files in this process (started as an ordinary user through setpriv) with ripgrep
 * and with the built-in search, and prints both results as JSON.
 */
const [workspace, pattern] = process.argv.slice(2) as [string, string];
const run = async (env: NodeJS.ProcessEnv) =>
  String(await createTools({ workspace, env }).search_files.invoke({ pattern } as never));
process.stdout.write(
  JSON.stringify({
    uid: process.getuid?.(),
    ripgrep: await run({}),
    builtIn: await run({ MINI_CURSOR_RIPGREP: "off" }),
  }),
);
