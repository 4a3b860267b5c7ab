import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import { AIMessage } from "@langchain/core/messages";
import { costOf, DEFAULT_PRICES, formatCost, parsePriceTable, priceFor } from "../../src/models/cost.js";
import { loadSettings, SettingsError } from "../../src/settings.js";
import { createJsonRenderer, createPrettyRenderer } from "../../src/ui/render.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

describe("prices", () => {
  test("known models by exact name, dated versions and router prefixes; unknown ones have none", () => {
    expect(priceFor("gpt-4o-mini")).toBe(DEFAULT_PRICES["gpt-4o-mini"]);
    expect(priceFor("gpt-4o-mini-2024-07-18")).toBe(DEFAULT_PRICES["gpt-4o-mini"]);
    expect(priceFor("gpt-4o-2024-08-06")).toBe(DEFAULT_PRICES["gpt-4o"]);
    expect(priceFor("openai/gpt-4.1-mini")).toBe(DEFAULT_PRICES["gpt-4.1-mini"]);
    expect(priceFor("DeepSeek-Chat")).toBe(DEFAULT_PRICES["deepseek-chat"]);
    expect(priceFor("qwen2.5-coder:7b")).toBeUndefined();
    expect(priceFor("gpt-4")).toBeUndefined();
    expect(priceFor("o3-pro-2025-06-10")).toBe(DEFAULT_PRICES["o3-pro"]);
    expect(priceFor(undefined)).toBeUndefined();
  });

  test("overrides win over the table and add models", () => {
    const overrides = { "gpt-4o-mini": { input: 1, output: 2 }, "qwen2.5-coder:7b": { input: 0, output: 0 } };
    expect(priceFor("gpt-4o-mini-2024-07-18", overrides)).toEqual({ input: 1, output: 2 });
    expect(priceFor("qwen2.5-coder:7b", overrides)).toEqual({ input: 0, output: 0 });
  });

  test("cost in USD per million tokens, cached input at its own price", () => {
    const price = { input: 2.5, output: 10, cachedInput: 1.25 };
    expect(costOf({ input: 1_000_000, output: 0 }, price)).toBe(2.5);
    expect(costOf({ input: 10_000, output: 1_000 }, price)).toBeCloseTo(0.035, 10);
    expect(costOf({ input: 10_000, output: 0, cachedInput: 8_000 }, price)).toBeCloseTo(0.015, 10);
  });

  test("formatCost", () => {
    expect(formatCost(0)).toBe("$0.00");
    expect(formatCost(0.00042)).toBe("$0.0004");
    expect(formatCost(0.1234)).toBe("$0.123");
    expect(formatCost(3.4)).toBe("$3.40");
  });

  test("MINI_CURSOR_PRICES overrides the table; a bad value is a settings error", () => {
    const env = { MINI_CURSOR_PRICES: '{"my-model": {"input": 0.5, "output": 1.5}}', INIT_CWD: "/tmp" };
    expect(loadSettings({}, env).prices).toEqual({ "my-model": { input: 0.5, output: 1.5 } });
    expect(loadSettings({}, { INIT_CWD: "/tmp" }).prices).toBeUndefined();
    expect(() => loadSettings({}, { MINI_CURSOR_PRICES: "{nope", INIT_CWD: "/tmp" })).toThrow(SettingsError);
    expect(() => loadSettings({}, { MINI_CURSOR_PRICES: '{"m": {"input": "cheap"}}', INIT_CWD: "/tmp" })).toThrow(
      /MINI_CURSOR_PRICES m\.input/,
    );
    expect(() => parsePriceTable('{"m": {"input": -1, "output": 1}}')).toThrow(/m\.input/);
  });
});

describe.each(["graph", "loop"] as const)("the %s engine", (kind) => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  /** A response as ChatOpenAI returns it: the provider's token counts and the model's name. */
  const priced = (content: string, input: number, output: number) => () =>
    new AIMessage({
      id: randomUUID(),
      content,
      usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      response_metadata: { model_name: "gpt-4o-mini-2024-07-18" },
    });

  test("usage events and run_end carry the cost of a known model", async () => {
    const h = engineHarness(kind, tmp.dir, [priced("hello", 10_000, 2_000)], {
      provider: "openai-compatible",
      model: "gpt-4o-mini",
    });
    const summary = await h.run("hi");
    const expected = (10_000 * 0.15 + 2_000 * 0.6) / 1_000_000;
    expect(eventsOf(h.events, "usage")[0]!.usage).toEqual({
      input: 10_000,
      output: 2_000,
      estimated: false,
      cost: expected,
    });
    const end = eventsOf(h.events, "run_end")[0]!;
    expect(end.usage).toEqual({ input: 10_000, output: 2_000, estimated: false, cost: expected });
    expect(summary.usage.cost).toBe(expected);
  });

  test("the offline model and unknown models have no cost", async () => {
    const offline = engineHarness(kind, tmp.dir, [priced("hello", 100, 10)]);
    await offline.run("hi");
    expect(eventsOf(offline.events, "run_end")[0]!.usage.cost).toBeUndefined();
    const local = engineHarness(kind, tmp.dir, ["hello"], { provider: "openai-compatible", model: "qwen2.5-coder:7b" });
    await local.run("hi");
    expect(eventsOf(local.events, "run_end")[0]!.usage.cost).toBeUndefined();
  });
});

describe("the closing line and --json", () => {
  const end = (cost?: number) => ({
    type: "run_end" as const,
    reason: "done" as const,
    steps: 2,
    toolCalls: 1,
    usage: { input: 12_345, output: 678, estimated: false, ...(cost === undefined ? {} : { cost }) },
    durationMs: 1500,
  });

  function render(cost?: number): string {
    const out = new PassThrough();
    let text = "";
    out.on("data", (d) => (text += d));
    createPrettyRenderer({ color: false, spinner: false, verbose: false, out }).event(end(cost));
    return text.trim();
  }

  test("shows the cost when known", () => {
    expect(render(0.0031)).toBe("✔ Done: 2 steps, 1 tool call, 12.3k tokens in / 678 out, $0.0031, 1.5 s");
    expect(render()).toBe("✔ Done: 2 steps, 1 tool call, 12.3k tokens in / 678 out, 1.5 s");
  });

  test("--json run_end has the tokens and the cost", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (d) => (text += d));
    createJsonRenderer({ verbose: false, out }).event(end(0.0031));
    expect(JSON.parse(text)).toEqual(end(0.0031));
  });
});
