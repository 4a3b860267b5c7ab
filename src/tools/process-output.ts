import path from "node:path";
import { z } from "zod";
import { redactSecrets } from "../security/env.js";
import { endedHow, type BackgroundProcess, type ProcessRegistry } from "../workspace/processes.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { ToolFailure } from "../guard/failure.js";
import { PROCESS_OUTPUT_PEERS, withPeerArguments } from "./aliases.js";
import { wholeNumber } from "./numbers.js";

/** Lines shown when the model gives no tail. */
export const DEFAULT_TAIL_LINES = 50;
/** Most lines one call shows. */
export const MAX_TAIL_LINES = 1000;
/** Cap on the characters one call shows, whatever the line count. */
export const MAX_PROCESS_OUTPUT_CHARS = 30_000;

const DESCRIPTION = `Show the latest output of a process execute_command left running in the background (a dev server, a watcher), and whether it is still running.
- id: the id execute_command gave, such as "bg-1".
- tail: how many of the last lines to show (default ${DEFAULT_TAIL_LINES}, at most ${MAX_TAIL_LINES}).
Use it to check a server started, to read an error it printed, or to see requests it logged. Stop it with stop_process.`;

const processOutputObject = z.strictObject({
  id: z.string().min(1).describe('Id of the background process, e.g. "bg-1".'),
  tail: wholeNumber(1, "tail must be a whole number of lines, 1 or more")
    .optional()
    .describe(`Number of last lines to show (default ${DEFAULT_TAIL_LINES}; more is shown as ${MAX_TAIL_LINES}).`),
});

/** Claude Code's bash_id and shell_id are accepted for id: aliases.ts. */
export const processOutputSchema = withPeerArguments(processOutputObject, PROCESS_OUTPUT_PEERS);

export type ProcessOutputInput = z.infer<typeof processOutputObject>;

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`;
}

/** "bg-1 (pid 4242) `npm run dev` in web: running at http://localhost:5173, started 2 min ago" */
export function describeProcess(proc: BackgroundProcess, workspaceRoot: string, now = Date.now()): string {
  const where = path.relative(workspaceRoot, proc.cwd) || ".";
  const state = proc.running ? `running${proc.url ? ` at ${proc.url}` : ""}` : endedHow(proc);
  return `${proc.id} (pid ${proc.pid}) \`${proc.command}\` in ${where}: ${state}, started ${ago(now - proc.startedAt)}`;
}

/** What the model reads when it names a process that does not exist. */
export function unknownProcess(id: string, registry: ProcessRegistry): string {
  const all = registry.list();
  if (all.length === 0) return `Error: there is no background process "${id}"; none has been started in this session.`;
  const known = all.map((p) => `${p.id} (${p.running ? "running" : "ended"}: ${p.command})`).join(", ");
  return `Error: there is no background process "${id}". Known: ${known}.`;
}

/** The last `lines` lines of `text`, within the character cap. */
export function tailLines(text: string, lines: number): { text: string; shown: number; total: number } {
  const all = text.replace(/\n$/, "").split("\n");
  if (text === "") return { text: "", shown: 0, total: 0 };
  let shownLines = all.slice(-lines);
  while (shownLines.length > 1 && shownLines.join("\n").length > MAX_PROCESS_OUTPUT_CHARS)
    shownLines = shownLines.slice(1);
  let joined = shownLines.join("\n");
  if (joined.length > MAX_PROCESS_OUTPUT_CHARS) joined = joined.slice(-MAX_PROCESS_OUTPUT_CHARS);
  return { text: joined, shown: shownLines.length, total: all.length };
}

async function processOutput(ctx: ToolContext, input: ProcessOutputInput): Promise<string> {
  const proc = ctx.processes.get(input.id.trim());
  if (!proc) throw new ToolFailure(unknownProcess(input.id, ctx.processes));
  const ws = await ctx.workspace();
  const lines = Math.min(input.tail ?? DEFAULT_TAIL_LINES, MAX_TAIL_LINES);
  // Secrets (the API key) are blanked here as in execute_command's own output.
  const tail = tailLines(redactSecrets(proc.output(), ctx.options.redact ?? []), lines);
  const header = describeProcess(proc, ws.root);
  if (tail.total === 0) return `${header}.\nNo output yet.`;
  const which =
    tail.shown < tail.total ? `last ${tail.shown} of the ${tail.total} lines kept` : `all ${tail.total} lines`;
  return `${header}.\nOutput (${which}):\n${tail.text}`;
}

export function processOutputTool(ctx: ToolContext) {
  return declared(
    tool((input) => processOutput(ctx, input), {
      name: "process_output",
      description: DESCRIPTION,
      schema: processOutputSchema,
    }),
    // Reads what a background process printed, kept in memory: no workspace file.
    { kind: "read", paths: {} },
  );
}
