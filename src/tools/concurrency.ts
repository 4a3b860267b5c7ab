/**
 * The most calls of one model turn that run at the same time (agent/tool-schedule.ts); the others
 * wait for a free place in call order. Above the twenty independent commands a model commonly
 * sends at once (issue 30), below what a small machine's process table minds.
 */
export const MAX_CONCURRENT_CALLS = 24;
