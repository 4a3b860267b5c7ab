import http from "node:http";
import { loadConfig } from "./config.js";

const config = loadConfig();
http
  .createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ notes: [] }));
  })
  .listen(config.port, () => console.log(`notes-api on http://localhost:${config.port}/`));
