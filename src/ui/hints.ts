import type { Settings } from "../settings.js";

/** Words a POSIX shell takes as they are; anything else is single-quoted. */
const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

/** One argument quoted for bash/zsh/sh, so a printed hint can be pasted as it is. */
export function shellQuote(arg: string): string {
  if (arg !== "" && SHELL_SAFE.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * A command that continues a thread, runnable as printed from any folder: the way mini-cursor
 * was started, the workspace (absolute), the thread and the request, each quoted for the shell.
 */
export function continueCommand(launcher: string, settings: Pick<Settings, "workspace" | "engine">, threadId: string, request = "continue"): string {
  const engine = settings.engine === "loop" ? ["--engine", "loop"] : [];
  return [launcher, "--workspace", settings.workspace, ...engine, "--thread", threadId, request]
    .map((word, i) => (i === 0 ? word : shellQuote(word)))
    .join(" ");
}
