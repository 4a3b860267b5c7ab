import { mergeSnapshots } from "../../src/agent/snapshot-step.js";

/**
 * Entries of one request merge in the order steps ended, which parallel sub-agents do not end in
 * the order they started: the request's `before` must be its earliest step's, whatever the order.
 */
const early = { before: "b-early", after: "a-early", startedAt: 100, paths: ["x.txt"] };
const late = { before: "b-late", after: "a-late", startedAt: 200, paths: ["y.txt"] };

test.each([
  ["earliest first", [early, late]],
  ["earliest last", [late, early]],
])("a request's before and start are its earliest step's (%s); the paths are all of them", (_order, entries) => {
  let merged = {};
  for (const entry of entries) merged = mergeSnapshots(merged, { req: entry });
  expect(merged).toEqual({
    req: {
      before: "b-early",
      after: entries[1]!.after,
      startedAt: 100,
      paths: [...new Set([...entries[0]!.paths, ...entries[1]!.paths])],
    },
  });
});

test("a step that recorded no before does not replace the request's", () => {
  const merged = mergeSnapshots({ req: late }, { req: { ...early, before: "" } });
  expect(merged.req!.before).toBe("b-late");
  expect(merged.req!.startedAt).toBe(100);
});
