import http from "node:http";

const DEFAULT_PORT = 4310;

const routes = {
  "GET /": (req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("notes dev server\n");
  },
  "GET /api/notes": (req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify([{ id: 1, text: "buy milk" }]));
  },
};

const server = http.createServer((req, res) => {
  const route = routes[`${req.method} ${new URL(req.url, "http://localhost").pathname}`];
  if (route) return route(req, res);
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: "not found" }));
});

// Like most dev servers: when the port is taken, try the next one.
function listen(port) {
  server.once("error", (err) => {
    if (err.code !== "EADDRINUSE") throw err;
    listen(port + 1);
  });
  server.listen(port, "127.0.0.1", () => {
    console.log(`Dev server ready at http://localhost:${server.address().port}/`);
  });
}

listen(process.env.PORT === undefined ? DEFAULT_PORT : Number(process.env.PORT));
