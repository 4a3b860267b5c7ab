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
for (const [name, value] of Object.entries(expected)) {
  const line = section.split("\n").find((l) => l.includes(name));
  if (!line) fail(`the Configuration section does not mention ${name}`);
  if (!line.includes(value)) fail(`the line for ${name} does not give its default ${value}: ${line}`);
}
for (const kept of ["# notes-api", "A small HTTP API for shared notes.", "## Running", "npm start", "## License", "MIT"]) {
  if (!readme.includes(kept)) fail(`README.md lost "${kept}"`);
}
console.log("ok");
