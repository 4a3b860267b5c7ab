/** The CLI's exit codes (README: Usage). */
export const EXIT = { ok: 0, failure: 1, usage: 2, maxSteps: 3, interrupted: 130 } as const;
