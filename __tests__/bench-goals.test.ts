import { atMost, clientMsPerStep, formatGoals, interleave, median } from "../scripts/bench-goals.js";

test("median of odd and even counts, unsorted input left alone", () => {
  const values = [5, 1, 3];
  expect(median(values)).toBe(3);
  expect(values).toEqual([5, 1, 3]);
  expect(median([4, 1, 3, 2])).toBe(2.5);
  expect(() => median([])).toThrow("median of nothing");
});

test("client time per step is the gap between requests minus the server's answers before the last", () => {
  // Three requests: the server answers in 2 ms and 3 ms; the client takes 10 ms and 20 ms after them.
  const requests = [
    { arrivedAt: 100, finishedAt: 102 },
    { arrivedAt: 112, finishedAt: 115 },
    { arrivedAt: 135, finishedAt: 190 }, // the last answer's time is not part of any step
  ];
  expect(clientMsPerStep(requests)).toBe(15);
  expect(clientMsPerStep([...requests].reverse())).toBe(15);
  expect(() => clientMsPerStep(requests.slice(0, 1))).toThrow("at least two requests");
});

test("goals carry the ratio to the target and whether it is met", () => {
  expect(atMost("per step", 4, 5, " ms")).toEqual({ name: "per step", measured: "4.0 ms", ratio: 0.8, met: true });
  expect(atMost("storage", 2.5, 2, "×", 2)).toEqual({ name: "storage", measured: "2.50×", ratio: 1.25, met: false });
  expect(formatGoals([atMost("per step", 5, 5, " ms"), atMost("storage", 3, 2, "×", 2)])).toEqual([
    "| goal | measured | × target | met |",
    "|---|---:|---:|:---:|",
    "| per step | 5.0 ms | 1.00 | yes |",
    "| storage | 3.00× | 1.50 | no |",
  ]);
});

test("interleave runs a, b, a, b and keeps each one's results in order", async () => {
  const order: string[] = [];
  let n = 0;
  const results = await interleave(2, {
    a: async () => (order.push("a"), ++n),
    b: async () => (order.push("b"), ++n),
  });
  expect(order).toEqual(["a", "b", "a", "b"]);
  expect(results).toEqual({ a: [1, 3], b: [2, 4] });
});
