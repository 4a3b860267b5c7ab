// README.md has a Configuration section naming each variable with its default; the rest is kept.
import { readFileSync } from "node:fs";

const readme = readFileSync("README.md", "utf8");
const fail = (why) => {
  console.log(why);
  process.exit(1);
};
const heading = readme.match(/^#{2,3} Configuration\s*$/m);
if (!heading) fail("README.md has no \"## Configuration\" heading");
const rest = readme.slice(heading.index + heading[0].length);
const section = rest.split(/^## /m)[0];
const expected = {
  NOTES_PORT: "3000",
  NOTES_LOG_LEVEL: "info",
  DATABASE_URL: "sqlite://data/notes.db",
  NOTES_CACHE_TTL: "300",
  NOTES_ALLOW_SIGNUP: "true",
};
const lines = section.split("\n");
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
for (const [name, value] of Object.entries(expected)) {
  const at = lines.findIndex((l) => l.includes(name));
  if (at < 0) fail(`the Configuration section does not mention ${name}`);
  // The default may sit on the variable's line or the two after it (a list with sub-items), up to the next variable.
  const others = Object.keys(expected).filter((n) => n !== name);
  const window = [lines[at]];
  for (const line of lines.slice(at + 1, at + 3)) {
    if (others.some((n) => line.includes(n))) break;
    window.push(line);
  }
  if (!new RegExp(`(?<![\\w.])${escape(value)}(?![\\w])`).test(window.join("\n"))) fail(`${name} is documented without its default ${value}: ${window.join(" ")}`);
}
for (const kept of ["# notes-api", "A small HTTP API for shared notes.", "## Running", "npm start", "## License", "MIT"]) {
  if (!readme.includes(kept)) fail(`README.md lost "${kept}"`);
}
console.log("ok");
