import { z } from "zod";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { ToolFailure } from "../guard/failure.js";
import { STOP_PROCESS_PEERS, withPeerArguments } from "./aliases.js";
import { describeProcess, unknownProcess } from "./process-output.js";

const DESCRIPTION = `Stop a process execute_command left running in the background (a dev server, a watcher), with every process it started.
- id: the id execute_command gave, such as "bg-1".
It gets SIGTERM, then SIGKILL if it is still running 2 s later. Processes still running when mini-cursor exits are stopped anyway.`;

const stopProcessObject = z.strictObject({
  id: z.string().min(1).describe('Id of the background process, e.g. "bg-1".'),
});

/** Claude Code's bash_id and shell_id are accepted for id: aliases.ts. */
export const stopProcessSchema = withPeerArguments(stopProcessObject, STOP_PROCESS_PEERS);

export type StopProcessInput = z.infer<typeof stopProcessObject>;

async function stopProcess(ctx: ToolContext, input: StopProcessInput): Promise<string> {
  const id = input.id.trim();
  const proc = ctx.processes.get(id);
  if (!proc) throw new ToolFailure(unknownProcess(input.id, ctx.processes));
  const ws = await ctx.workspace();
  if (!proc.running || !(await ctx.processes.stop(id))) return `${describeProcess(proc, ws.root)}; nothing to stop.`;
  return `Stopped ${proc.id} (\`${proc.command}\`) and the processes it started.`;
}

export function stopProcessTool(ctx: ToolContext) {
  return declared(
    tool((input) => stopProcess(ctx, input), {
      name: "stop_process",
      description: DESCRIPTION,
      schema: stopProcessSchema,
    }),
    // Stops only a process this session started.
    { kind: "other", paths: {} },
  );
}
