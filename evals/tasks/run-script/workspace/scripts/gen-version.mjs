// Writes src/version.js from package.json, so the code can show its version without reading JSON.
import { readFileSync, writeFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync("package.json", "utf8"));
writeFileSync("src/version.js", `export const VERSION = ${JSON.stringify(version)};\n`);
console.log(`src/version.js: ${version}`);
