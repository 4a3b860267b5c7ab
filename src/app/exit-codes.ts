/** The CLI's exit codes (docs/usage.md). */
/** notRun: every action the task asked for was declined or refused, so nothing was done. */
export const EXIT = { ok: 0, failure: 1, usage: 2, maxSteps: 3, notRun: 4, interrupted: 130 } as const;
