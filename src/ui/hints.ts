import type { Settings } from "../settings.js";
import { shellQuote } from "../shell-quote.js";

/**
 * A command that continues a thread, runnable as printed from any folder: the way mini-cursor
 * was started, the workspace (absolute), the thread and the request, each quoted for the shell.
 */
export function continueCommand(
  launcher: string,
  settings: Pick<Settings, "workspace" | "engine">,
  threadId: string,
  request = "continue",
): string {
  const engine = settings.engine === "loop" ? ["--engine", "loop"] : [];
  return [launcher, "--workspace", settings.workspace, ...engine, "--thread", threadId, request]
    .map((word, i) => (i === 0 ? word : shellQuote(word)))
    .join(" ");
}
