/**
 * Server-sent events as the `data:` payloads they carry. Tolerates what servers send besides
 * OpenAI's exact framing: `data:` without a space, CRLF line ends, comment lines (`: ping`),
 * `event:` lines, and payloads split across network reads.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let finished = false;
  const reader = body.getReader();
  const take = (line: string) => data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        if (line === "") {
          if (data.length > 0) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) take(line);
      }
      if (done) break;
    }
    finished = true;
    const last = buffer.replace(/\r$/, "");
    if (last.startsWith("data:")) take(last);
    if (data.length > 0) yield data.join("\n");
  } finally {
    // Abandoned early (idle timeout, Ctrl-C): close the connection too.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
