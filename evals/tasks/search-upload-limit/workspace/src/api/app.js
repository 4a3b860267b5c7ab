import http from "node:http";
import { authenticate } from "./middleware/auth.js";
import { limitBody } from "./middleware/body-limit.js";
import { routes } from "./routes/index.js";

export function createApp() {
  return http.createServer(async (req, res) => {
    if (!authenticate(req, res)) return;
    if (!(await limitBody(req, res))) return;
    const handler = routes[`${req.method} ${new URL(req.url, "http://local").pathname}`];
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });
}
