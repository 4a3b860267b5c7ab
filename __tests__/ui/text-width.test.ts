import { Writable } from "node:stream";
import { Chalk } from "chalk";
import { createSpinner } from "../../src/ui/spinner.js";
import { displayWidth, fitQuestion, fitWidth, wrapChoices, wrapWords } from "../../src/ui/text-width.js";
import { waitFor } from "../helpers/tmp.js";

test("display width: wide characters take two columns, combining marks none", () => {
  expect(displayWidth("abc")).toBe(3);
  expect(displayWidth("读取文件")).toBe(8);
  expect(displayWidth("e\u0301")).toBe(1);
  expect(displayWidth("ok 🚀")).toBe(5);
});

test("fitWidth cuts with an ellipsis, within the width, wide characters whole", () => {
  expect(fitWidth("abcdef", 6)).toBe("abcdef");
  expect(fitWidth("abcdefg", 6)).toBe("abcde…");
  expect(fitWidth("读取文件内容", 6)).toBe("读取…");
  expect(displayWidth(fitWidth("读取文件内容", 6))).toBeLessThanOrEqual(6);
  expect(fitWidth("abc", 0)).toBe("");
});

test("wrapWords breaks at spaces with a hanging indent, and a word wider than a line where it must", () => {
  expect(wrapWords("  (runs a shell command that asks)", 16, "    ")).toEqual([
    "  (runs a shell",
    "    command that",
    "    asks)",
  ]);
  expect(wrapWords("x ".repeat(3) + "y".repeat(12), 8, "")).toEqual(["x x x", "yyyyyyyy", "yyyy"]);
});

test("wrapChoices breaks between choices, each line ending in ' /'", () => {
  expect(wrapChoices("  [y]es / [n]o / [e]dit / or type feedback:", 24)).toEqual([
    "  [y]es / [n]o /",
    "  [e]dit /",
    "  or type feedback:",
  ]);
});

test("fitQuestion: a question that fits is as it was; a wide one is split so the prompt fits one line", () => {
  const q = {
    text: "\n? Allow x:\n",
    prompt: "  [y]es / [n]o / [a]lways this session (`npm test`) / or type feedback: ",
  };
  expect(fitQuestion(q, 200)).toEqual(q);
  expect(fitQuestion(q, undefined)).toEqual(q);
  const narrow = fitQuestion(q, 60);
  expect(narrow.text).toBe("\n? Allow x:\n  [y]es / [n]o /\n  [a]lways this session (`npm test`) /\n");
  expect(narrow.prompt).toBe("  or type feedback: ");
  for (const line of `${narrow.text}${narrow.prompt}`.split("\n")) expect(displayWidth(line)).toBeLessThanOrEqual(59);
});

test("the spinner's line fits the terminal however long its label, and leaves one line per frame", async () => {
  let written = "";
  const out = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        written += chunk.toString();
        done();
      },
    }),
    { columns: 80 },
  );
  const spinner = createSpinner(out, true, new Chalk({ level: 0 }));
  spinner.start(`waiting for the model provider at http://127.0.0.1:43210/v1: no response yet (gives up after 60 s)`);
  await waitFor(() => written.split("\r\x1b[2K").length > 3);
  spinner.stop();
  const frames = written.split("\r\x1b[2K").filter(Boolean);
  expect(frames.length).toBeGreaterThan(1);
  for (const frame of frames) {
    expect(frame).not.toContain("\n");
    expect(displayWidth(frame)).toBeLessThanOrEqual(79);
    expect(frame).toMatch(
      /^. waiting for the model provider at http:\/\/127\.0\.0\.1:43210\/v1: no respo.*… \d+\.\ds$/,
    );
  }
});
