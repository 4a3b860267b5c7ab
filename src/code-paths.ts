/**
 * The code paths this process reached, for the launcher (scripts/start.mjs): it keeps the V8 code
 * cache of the bundle from the run that reached the most, so a cache written by a run that only
 * launched (or printed --version) is replaced once a run has used tools, and a session's first
 * tool step is not compiled anew in every process. Kept on globalThis, where the launcher reads it
 * at exit; outside the launcher (tests, tsx) nothing reads it.
 */
const CODE_PATHS = Symbol.for("mini-cursor.codePaths");

export function noteCodePath(name: string): void {
  const holder = globalThis as { [CODE_PATHS]?: Set<string> };
  (holder[CODE_PATHS] ??= new Set()).add(name);
}
