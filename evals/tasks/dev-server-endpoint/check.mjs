// Starts server.js (PORT set to a free port) and asks GET /api/health for {"status":"ok"}; the old routes still answer.
import { spawn } from "node:child_process";
import net from "node:net";

const DEADLINE_MS = 20_000;
const fail = (why) => {
  console.log(why);
  server.kill("SIGKILL");
  process.exit(1);
};
// A port free right now, so a server still running elsewhere does not answer for this one.
const freePort = await new Promise((resolve) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const server = spawn(process.execPath, ["server.js"], { env: { ...process.env, PORT: String(freePort) }, stdio: ["ignore", "pipe", "pipe"] });
const timer = setTimeout(() => fail(`server.js announced no URL within ${DEADLINE_MS} ms`), DEADLINE_MS);
let output = "";
const url = await new Promise((resolve) => {
  const onData = (d) => {
    output += d.toString();
    const m = output.match(/http:\/\/(localhost|127\.0\.0\.1):(\d+)/);
    if (m) resolve(`http://127.0.0.1:${m[2]}`);
  };
  server.stdout.on("data", onData);
  server.stderr.on("data", onData);
  server.on("exit", (code) => fail(`server.js exited (code ${code}) before announcing a URL:\n${output}`));
});
clearTimeout(timer);
const health = await fetch(`${url}/api/health`);
const body = await health.text();
if (health.status !== 200) fail(`GET /api/health answered ${health.status}: ${body}`);
let json;
try {
  json = JSON.parse(body);
} catch {
  fail(`GET /api/health did not answer JSON: ${body}`);
}
if (JSON.stringify(json) !== JSON.stringify({ status: "ok" })) fail(`GET /api/health answered ${body}`);
const notes = await fetch(`${url}/api/notes`);
if (notes.status !== 200) fail(`GET /api/notes now answers ${notes.status}`);
server.kill("SIGKILL");
console.log("ok");
process.exit(0);
