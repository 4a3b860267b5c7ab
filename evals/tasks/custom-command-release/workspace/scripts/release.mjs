// Releases a version: `node scripts/release.mjs <version> <note>` sets it in package.json,
// regenerates src/version.js and adds the note to CHANGELOG.md.
import { readFileSync, writeFileSync } from "node:fs";

const [version, note] = process.argv.slice(2);
if (!/^\d+\.\d+\.\d+$/.test(version ?? "") || !note) {
  console.error('usage: node scripts/release.mjs <version> "<note>"');
  process.exit(2);
}
const pkg = JSON.parse(readFileSync("package.json", "utf8"));
pkg.version = version;
writeFileSync("package.json", `${JSON.stringify(pkg, null, 2)}\n`);
writeFileSync("src/version.js", `export const VERSION = "${version}";\n`);
const log = readFileSync("CHANGELOG.md", "utf8");
writeFileSync("CHANGELOG.md", log.replace(/^# Changelog\n/, `# Changelog\n\n## ${version}\n\n- ${note}\n`));
console.log(`Released ${version}: ${note}`);
