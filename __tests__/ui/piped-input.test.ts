import { PassThrough } from "node:stream";
import { waitFor } from "../helpers/tmp.js";
import { MAX_PIPED_BYTES, readPipedInput, withPipedText } from "../../src/ui/piped-input.js";

describe("withPipedText", () => {
  test("the piped text follows the task in a stdin block, trailing blank lines dropped", () => {
    expect(withPipedText("explain", "a\nb\n\n")).toBe("explain\n\n<stdin>\na\nb\n</stdin>");
  });
  test("nothing but whitespace piped in leaves the task as it is", () => {
    expect(withPipedText("explain", " \n\n")).toBe("explain");
  });
});

describe("readPipedInput", () => {
  test("reads to the end, in pieces", async () => {
    const input = new PassThrough();
    const read = readPipedInput(input);
    input.write("one\n");
    input.end("two\n");
    expect(await read).toEqual({ text: "one\ntwo\n" });
  });

  test("stops past the limit without waiting for the end", async () => {
    const input = new PassThrough();
    const read = readPipedInput(input, { limit: 8 });
    input.write("12345");
    input.write("6789");
    expect(await read).toEqual({ tooLong: true });
  });

  test("exactly the limit is text; NUL bytes are not", async () => {
    const full = new PassThrough();
    const read = readPipedInput(full);
    full.end(Buffer.alloc(MAX_PIPED_BYTES, 0x61));
    expect(((await read) as { text: string }).text).toHaveLength(MAX_PIPED_BYTES);
    const binary = new PassThrough();
    const bin = readPipedInput(binary);
    binary.end(Buffer.from([0x50, 0x00, 0x01]));
    expect(await bin).toEqual({ binary: true });
  });

  test("a wait is said once when the input has not ended in time", async () => {
    const input = new PassThrough();
    let told = 0;
    const read = readPipedInput(input, { noticeMs: 10, onWait: () => told++ });
    await waitFor(() => told === 1);
    input.end("late");
    expect(await read).toEqual({ text: "late" });
    expect(told).toBe(1);
  });

  test("giveUpIfSilentMs: nothing at all in time is nothing piped in, without a notice", async () => {
    const input = new PassThrough();
    let told = 0;
    expect(await readPipedInput(input, { giveUpIfSilentMs: 20, noticeMs: 10, onWait: () => told++ })).toEqual({
      text: "",
    });
    expect(told).toBe(0);
  });

  test("giveUpIfSilentMs: once a byte came, it reads to the end however long that takes", async () => {
    const input = new PassThrough();
    const read = readPipedInput(input, { giveUpIfSilentMs: 20 });
    input.write("a");
    let settled = false;
    void read.then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    await waitFor(() => input.listenerCount("data") === 1);
    expect(settled).toBe(false);
    await new Promise((r) => setTimeout(r, 40));
    expect(settled).toBe(false);
    input.end("b");
    expect(await read).toEqual({ text: "ab" });
  });
});
