import { configureParts } from "../../src/app/configure.js";
import { createTools } from "../../src/tools/index.js";
import { attackPatchDelete } from "./patch-delete-race.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/** Runs the apply_patch delete race in this process (started as an ordinary user); prints the findings as JSON. */
const [workspace, outside, rounds] = process.argv.slice(2) as [string, string, string];
const findings = await attackPatchDelete(
  createTools({ workspace, env: { PATH: process.env.PATH } }),
  workspace,
  outside,
  Number(rounds),
);
process.stdout.write(JSON.stringify({ uid: process.getuid?.(), outsideIntact: findings.outsideIntact }));
