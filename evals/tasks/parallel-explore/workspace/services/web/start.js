import { readFileSync } from "node:fs";

const { devServer } = JSON.parse(readFileSync(new URL("./settings.json", import.meta.url), "utf8"));
console.log(`web on http://localhost:${devServer.port}/`);
