import { createTools } from "../../src/tools/index.js";
import { attackTools, startSwapper, writtenOutside } from "./race-attack.js";

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
