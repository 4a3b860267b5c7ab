import { PassThrough } from "node:stream";
import type { RunSummary } from "../../src/agent/engine.js";
import type { Session } from "../../src/app/session.js";
import { PasteFilter, PasteStore } from "../../src/ui/paste.js";
import type { Renderer } from "../../src/ui/render.js";
import { runRepl, type ReplControls, type ReplEnd } from "../../src/ui/repl.js";
import { waitFor } from "../helpers/tmp.js";

/**
 * Issue 31 item 1, the prompt's own logic with a fake terminal (the pseudo-terminal tests drive
 * the real CLI): bracketed pastes arrive whole, a trailing backslash continues a request, and a
 * second Ctrl-C within a second leaves even when the cancelled turn ended before it came.
 */

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

describe("PasteFilter and PasteStore", () => {
  test("typed keys pass; a paste becomes a placeholder that expands to the whole text", () => {
    const store = new PasteStore();
    const filter = new PasteFilter((t) => store.placeholder(t));
    const shown = filter.feed(`fix this: ${PASTE_START}line one\r\nline two\rline three\n${PASTE_END} please`);
    expect(shown).toBe("fix this: [pasted text #1: 3 lines] please");
    expect(store.expand(shown)).toBe("fix this: line one\nline two\nline three please");
  });

  test("markers split across reads, and a one-line paste is inserted as text without controls", () => {
    const store = new PasteStore();
    const filter = new PasteFilter((t) => store.placeholder(t));
    const reads = ["a\x1b[2", "00~one\x1b", "[B\tline\x1b[20", "1~b"];
    expect(reads.map((r) => filter.feed(r)).join("")).toBe("aone[B  lineb");
  });

  test("a multi-byte character split across reads is kept whole", () => {
    const filter = new PasteFilter((t) => t);
    const bytes = Buffer.from("é", "utf8");
    expect(filter.feed(bytes.subarray(0, 1)) + filter.feed(bytes.subarray(1))).toBe("é");
  });
});

interface FakeTerminal {
  input: PassThrough & { isTTY: boolean; setRawMode: (mode: boolean) => void };
  output: PassThrough & { isTTY: boolean };
  screen(): string;
}

function fakeTerminal(): FakeTerminal {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: (_mode: boolean) => undefined });
  const output = Object.assign(new PassThrough(), { isTTY: true });
  let screen = "";
  output.on("data", (d: Buffer) => (screen += d.toString()));
  return { input, output, screen: () => screen };
}

const quietRenderer: Renderer = { banner() {}, event() {}, note() {}, pause() {} };

const summary = (reason: RunSummary["reason"]): RunSummary =>
  ({ reason, steps: 1, toolCalls: 0, usage: { input: 0, output: 0, estimated: true }, durationMs: 1 }) as RunSummary;

/** A session whose turns record their request; `hold` turns wait until cancelled. */
function fakeSession(hold: boolean) {
  const requests: string[] = [];
  const session = {
    settings: { maxSteps: 30 },
    running: () => [],
    runTurn: (task: string, signal: AbortSignal) => {
      requests.push(task);
      if (!hold) return Promise.resolve(summary("done"));
      return new Promise<RunSummary>((resolve) =>
        signal.addEventListener("abort", () => resolve(summary("interrupted")), { once: true }),
      );
    },
  } as unknown as Session;
  return { session, requests };
}

function startRepl(term: FakeTerminal, session: Session, command: "exit" | "continue" = "exit") {
  let controls: ReplControls | undefined;
  const ended: Promise<ReplEnd> = runRepl(session, quietRenderer, {
    input: term.input,
    output: term.output,
    interactive: true,
    approver: () => async () => ({ decision: "deny" }),
    runCommand: async () => command,
    watchSignals: (c) => {
      controls = c;
      return () => undefined;
    },
  });
  return { ended, controls: () => controls! };
}

describe("the prompt on a terminal", () => {
  test("a pasted block reaches the turn whole; the prompt line shows a placeholder", async () => {
    const term = fakeTerminal();
    const { session, requests } = fakeSession(false);
    const repl = startRepl(term, session);
    await waitFor(() => term.screen().includes("› "), 5_000);
    expect(term.screen()).toContain("\x1b[?2004h");
    term.input.write(`${PASTE_START}first line\nsecond line\nthird line${PASTE_END}`);
    await waitFor(() => term.screen().includes("[pasted text #1: 3 lines]"), 5_000);
    term.input.write("\r");
    await waitFor(() => requests.length === 1, 5_000);
    expect(requests).toEqual(["first line\nsecond line\nthird line"]);
    term.input.write("\x04");
    expect(await repl.ended).toBe("left");
    // Bracketed paste mode is switched off again whenever the prompt is not shown.
    expect(term.screen().endsWith("\x1b[?2004l")).toBe(true);
  });

  test("a line ending in a backslash goes on on the next one", async () => {
    const term = fakeTerminal();
    const { session, requests } = fakeSession(false);
    const repl = startRepl(term, session);
    await waitFor(() => term.screen().includes("› "), 5_000);
    term.input.write("write a haiku \\\r");
    await waitFor(() => term.screen().includes("… "), 5_000);
    term.input.write("about tea\r");
    await waitFor(() => requests.length === 1, 5_000);
    expect(requests).toEqual(["write a haiku \nabout tea"]);
    term.input.write("\x04");
    expect(await repl.ended).toBe("left");
  });

  test("Ctrl-C twice within a second during a turn leaves, even when the turn ended before the second", async () => {
    const term = fakeTerminal();
    const { session, requests } = fakeSession(true);
    const repl = startRepl(term, session);
    await waitFor(() => term.screen().includes("› "), 5_000);
    term.input.write("run something long\r");
    await waitFor(() => requests.length === 1, 5_000);
    // The first Ctrl-C cancels the turn, which ends at once; the second comes at the prompt.
    repl.controls().interrupt();
    await waitFor(() => (term.screen().match(/› /g) ?? []).length === 2, 5_000);
    term.input.write("\x03");
    expect(await repl.ended).toBe("interrupted");
    expect(term.screen()).not.toContain("press Ctrl-C again");
  });

  test("a line entered after a cancelling Ctrl-C unpairs it: a Ctrl-C within the second asks again", async () => {
    const term = fakeTerminal();
    const { session, requests } = fakeSession(true);
    const repl = startRepl(term, session, "continue");
    await waitFor(() => term.screen().includes("› "), 5_000);
    term.input.write("run something long\r");
    await waitFor(() => requests.length === 1, 5_000);
    repl.controls().interrupt();
    await waitFor(() => (term.screen().match(/› /g) ?? []).length === 2, 5_000);
    // A slash command at once, then Ctrl-C at the next prompt, all within a second of the first.
    term.input.write("/ps\r");
    await waitFor(() => (term.screen().match(/› /g) ?? []).length === 3, 5_000);
    term.input.write("\x03");
    await waitFor(() => term.screen().includes("(press Ctrl-C again to exit, or type /exit)"), 5_000);
    term.input.write("\x03");
    expect(await repl.ended).toBe("left");
  });
});
