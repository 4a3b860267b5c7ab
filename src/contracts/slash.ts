import type { Approver } from "./events.js";

/** What a slash command tells the REPL (ui/repl.ts) to do next; the commands live in app/slash-commands.ts. */
export type SlashResult =
  | "continue"
  | "exit"
  | { request: string }
  /** Work the session runs as it runs a turn: Ctrl-C aborts `signal` (/compact). */
  | { work: (signal: AbortSignal) => Promise<void> }
  /**
   * A request that needs the turn's approver first (a custom command's `` !`cmd` `` lines): run
   * as a turn is, then the request it returns is run as typed; undefined: nothing is sent.
   */
  | { prepare: (signal: AbortSignal, approver: Approver) => Promise<string | undefined> };
