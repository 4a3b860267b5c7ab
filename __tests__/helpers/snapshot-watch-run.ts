import { runOracle } from "./snapshot-watch-oracle.js";

/** Runs the watcher's oracle in this process (started as an ordinary user); prints the results as JSON. */
const [ws, watchedHome, scannedHome] = process.argv.slice(2) as [string, string, string];
const results = await runOracle(ws, watchedHome, scannedHome);
process.stdout.write(JSON.stringify({ uid: process.getuid?.(), results }));
// The watches are not persistent, but the stores' git children may be: nothing is left to wait for.
process.exit(0);
