import { measureTaskCall, TASK_VARIANTS } from "../scripts/bench-subagent.js";

/** The task-call measurement of `npm run bench` runs a real sub-agent on every engine (timing goals live in the bench). */
test.each(TASK_VARIANTS)("%s: the sub-agent's first request comes after the parent's task call", async (variant) => {
  const ms = await measureTaskCall(variant);
  expect(ms).toBeGreaterThan(0);
});
