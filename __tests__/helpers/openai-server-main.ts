/**
 * The scripted OpenAI-compatible server as a process, for CLI subprocess tests:
 *
 *   tsx __tests__/helpers/openai-server-main.ts <script.json> [requests.jsonl]
 *
 * `script.json` holds a ScriptStep array. Prints `LISTENING <port>` on stdout once it accepts
 * connections (the base URL is then http://127.0.0.1:<port>/v1), appends every chat
 * completions body as one JSON line to `requests.jsonl`, and exits when its stdin closes (so it
 * dies with the test that spawned it) or on SIGTERM/SIGINT.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { startOpenAIServer, type ScriptStep } from "./openai-server.js";

async function main(): Promise<void> {
  const [scriptPath, logPath] = process.argv.slice(2);
  if (!scriptPath) {
    process.stderr.write("usage: openai-server-main <script.json> [requests.jsonl]\n");
    process.exit(2);
  }
  const script = JSON.parse(readFileSync(scriptPath, "utf8")) as ScriptStep[];
  if (!Array.isArray(script)) throw new Error(`${scriptPath} must hold a JSON array of script steps`);
  if (logPath) writeFileSync(logPath, "");
  const server = await startOpenAIServer(script, {
    onRequest: (request) => {
      if (logPath) appendFileSync(logPath, `${JSON.stringify(request)}\n`);
    },
  });
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    void server.close().then(() => process.exit(0));
  };
  process.stdin.on("end", shutdown);
  process.stdin.on("close", shutdown);
  process.stdin.resume();
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.stdout.write(`LISTENING ${server.port}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
