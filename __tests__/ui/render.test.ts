import { createJsonRenderer } from "../../src/ui/render.js";

/**
 * `--json` output (ui/render.ts): a streamed answer's token events go out together, one write
 * per turn of the event loop, and never after the event that follows them.
 */

function writes(): { out: NodeJS.WritableStream; chunks: string[] } {
  const chunks: string[] = [];
  return { out: { write: (s: string) => (chunks.push(s), true) } as unknown as NodeJS.WritableStream, chunks };
}

const token = (text: string) => ({ type: "token", step: 1, text }) as const;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test("tokens of one turn are one write; the next other event flushes them first, in order", async () => {
  const { out, chunks } = writes();
  const r = createJsonRenderer({ verbose: false, out });
  r.event(token("Read"));
  r.event(token("ing"));
  expect(chunks).toEqual([]);
  await nextTurn();
  expect(chunks).toEqual(['{"type":"token","step":1,"text":"Read"}\n{"type":"token","step":1,"text":"ing"}\n']);
  r.event(token(" the"));
  r.event({ type: "step", step: 2 } as never);
  expect(chunks.slice(1)).toEqual(['{"type":"token","step":1,"text":" the"}\n', '{"type":"step","step":2}\n']);
  await nextTurn();
  expect(chunks).toHaveLength(3);
});

test("a token is gated like every other event", async () => {
  const { out, chunks } = writes();
  const r = createJsonRenderer({ verbose: false, out });
  r.event(token("\u001b]52;c;cHduZWQ=\u0007"));
  await nextTurn();
  expect(chunks.join("")).toBe('{"type":"token","step":1,"text":"\\u001b]52;c;cHduZWQ=\\u0007"}\n');
});
