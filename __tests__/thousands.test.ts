import { withThousands } from "../src/thousands.js";

test("withThousands writes counts as toLocaleString('en-US') does", () => {
  for (const n of [0, 7, 999, 1000, 30_000, 1_234_567, -1234, -999, 9_007_199_254_740_991, 1.5, Number.NaN])
    expect(withThousands(n)).toBe(n.toLocaleString("en-US"));
  expect(withThousands(30_000)).toBe("30,000");
});
