import { oneReadScript } from "../scripts/bench-cli.js";
import { startBenchServer } from "../scripts/bench-server.js";

test("the bench server streams the script's steps and records each request with its message bytes", async () => {
  const server = await startBenchServer(oneReadScript(2));
  try {
    const messages = [{ role: "user", content: "read the notes" }];
    const ask = () =>
      fetch(`${server.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", stream: true, messages }),
      }).then((r) => r.text());
    const first = await ask();
    expect(first).toContain('"name":"read_file"');
    expect(first).toContain("Reading");
    expect(first.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const second = await ask();
    expect(second).toContain('"content":" done."');
    expect(second).not.toContain("tool_calls");
    // Another agent's endpoint counts as a request and is refused.
    const other = await fetch(`${server.url}/responses`, { method: "POST", body: "{}" });
    expect(other.status).toBe(404);
    expect(server.requests.map((r) => [r.path, r.messagesBytes])).toEqual([
      ["/v1/chat/completions", JSON.stringify(messages).length],
      ["/v1/chat/completions", JSON.stringify(messages).length],
      ["/v1/responses", 0],
    ]);
    for (const r of server.requests) expect(r.finishedAt).toBeGreaterThanOrEqual(r.arrivedAt);
  } finally {
    await server.close();
  }
});
