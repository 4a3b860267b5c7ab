/** The diff a tool attached to its result (edit_file), for the trace; undefined otherwise. */
export function resultDiff(message: { artifact?: unknown }): string | undefined {
  const diff = (message.artifact as { diff?: unknown } | undefined)?.diff;
  return typeof diff === "string" && diff !== "" ? diff : undefined;
}
