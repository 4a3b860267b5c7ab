import { configureParts } from "../../src/app/configure.js";
import { createTools } from "../../src/tools/index.js";
import { attackTools, startSwapper, writtenOutside } from "./race-attack.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/** Runs the race attack in this process (started as an ordinary user) and prints the findings as JSON. */
const [workspace, outside, rounds] = process.argv.slice(2) as [string, string, string];
const swapper = await startSwapper(workspace);
try {
  const { leaks, calls } = await attackTools(
    createTools({ workspace, env: { PATH: process.env.PATH } }),
    Number(rounds),
  );
  swapper.kill("SIGKILL");
  process.stdout.write(
    JSON.stringify({ uid: process.getuid?.(), calls, leaks, writtenOutside: writtenOutside(outside) }),
  );
} finally {
  swapper.kill("SIGKILL");
}
