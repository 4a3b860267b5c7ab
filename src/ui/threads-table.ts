import type { ThreadInfo } from "../memory/threads.js";

/** Longest first request shown in the table. */
const TITLE_WIDTH = 50;

function shorten(text: string, width: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > width ? `${oneLine.slice(0, width - 1)}…` : oneLine;
}

function when(iso: string): string {
  return iso.replace("T", " ").slice(0, 16);
}

/** The saved threads as a table, newest first; the current one is marked. */
export function formatThreads(threads: ThreadInfo[], current?: string): string {
  if (threads.length === 0) return "No saved threads in this workspace yet.";
  const idWidth = Math.max(2, ...threads.map((t) => t.id.length));
  const header = `  ${"id".padEnd(idWidth)}  ${"last update".padEnd(16)}  engine  steps  first request`;
  const rows = threads.map(
    (t) =>
      `${t.id === current ? "*" : " "} ${t.id.padEnd(idWidth)}  ${when(t.updatedAt)}  ${t.engine.padEnd(6)}  ${String(t.steps).padStart(5)}  ${shorten(t.firstRequest, TITLE_WIDTH)}`,
  );
  return [header, ...rows].join("\n");
}
