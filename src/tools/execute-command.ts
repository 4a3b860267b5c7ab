import { z } from "zod";
import { resolvePath } from "../workspace/paths.js";
import { MAX_OUTPUT_CHARS } from "../workspace/output-store.js";
import {
  DEFAULT_TIMEOUT_MS,
  KILL_CONFIRM_MS,
  KILL_GRACE_MS,
  MAX_TIMEOUT_MS,
  runCommand,
  type CommandResult,
  unknownExitStatus,
} from "../workspace/processes.js";
import { redactSecrets } from "../security/env.js";
import { snapshotRules } from "../security/rules-guard.js";
import { commandEnvironment } from "../workspace/processes.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { MAX_CONCURRENT_CALLS } from "../guard/order.js";
import { EXECUTE_COMMAND_PEERS, withPeerArguments } from "./aliases.js";
import { toolErrorMessage, ToolFailure, type FailureDetails } from "../guard/failure.js";
import { withThousands } from "../thousands.js";

/** Exit status bash uses when it cannot find the program. */
const EXIT_COMMAND_NOT_FOUND = 127;
/** Exit status bash uses when the program exists but cannot be run. */
const EXIT_NOT_EXECUTABLE = 126;

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;

export const EXECUTE_COMMAND_DESCRIPTION = `Run a shell command with bash and return its exit code and output (stdout and stderr interleaved, in order).
- It runs in the workspace root. To run it elsewhere, set workingDirectory (a directory inside the workspace); do not start the command with \`cd\`.
- stdin is closed, so nothing can prompt for input: pass flags such as --yes / -y / --non-interactive. PAGER=cat, git never prompts, and MINI_CURSOR=1 is set.
- Timeout: ${seconds(DEFAULT_TIMEOUT_MS)} by default; set timeoutMs up to ${MAX_TIMEOUT_MS} (${seconds(MAX_TIMEOUT_MS)}) for long installs, builds or test runs. On timeout every process the command started is stopped and you get the output so far.
- Output longer than ${withThousands(MAX_OUTPUT_CHARS)} characters is cut to its start and end; the full output is saved in a file outside the workspace whose path the result gives; read_file reads it (page through it with offset).
- Dev servers (npm run dev, vite, python -m http.server, ...): run them directly, without \`&\` or nohup. When a server prints its local URL or says it is ready or listening, the call returns with the URL and an id such as bg-1 while the server keeps running in the background until mini-cursor exits. Anything a command leaves running with \`&\` is stopped when the command ends.
- Several execute_command calls in one turn run at the same time (at most ${MAX_CONCURRENT_CALLS} at once), in no set order: give commands that depend on each other as one command joined with \`&&\`, or in separate turns. File tools called in the same turn run after the commands before them and before the commands after them.`;

const executeCommandObject = z.strictObject({
  command: z.string().min(1).describe("The bash command to run, e.g. `npm test` or `ls -la src`."),
  workingDirectory: z
    .string()
    .optional()
    .describe("Directory to run in, relative to the workspace root (default: the root). Use this instead of `cd`."),
  timeoutMs: z
    .number()
    .positive()
    .optional()
    .describe(`Timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS}, maximum ${MAX_TIMEOUT_MS}).`),
});

/** Other agents' names (workdir, cwd, timeout, timeout_ms, cmd, an argv array) are accepted: aliases.ts. */
export const executeCommandSchema = withPeerArguments(executeCommandObject, EXECUTE_COMMAND_PEERS);

export type ExecuteCommandInput = z.infer<typeof executeCommandObject>;

function exitLine(result: CommandResult): string {
  const code = result.exitCode;
  if (result.helperLost) {
    const status = unknownExitStatus(result.helperLost);
    return `${status[0]!.toUpperCase()}${status.slice(1)}; run it again if the result matters`;
  }
  if (result.exitUnseen) {
    return `Exit status unknown: its end was not seen within ${seconds(KILL_CONFIRM_MS)} of stopping its process group (a process stuck in the kernel, e.g. on a hung disk or network mount); run it again if the result matters`;
  }
  if (result.signal) return `Exit code: ${code} (killed by ${result.signal})`;
  if (code === EXIT_COMMAND_NOT_FOUND) {
    return `Exit code: ${code} (command not found: check the program's name and that it is installed)`;
  }
  if (code === EXIT_NOT_EXECUTABLE) return `Exit code: ${code} (found but not executable: check its permissions)`;
  return `Exit code: ${code}`;
}

function stoppedHow(result: CommandResult): string {
  return result.stoppedWith === "SIGKILL"
    ? `process group stopped (it ignored SIGTERM, so it got SIGKILL after ${seconds(KILL_GRACE_MS)})`
    : "process group stopped";
}

function statusLines(result: CommandResult): string[] {
  switch (result.status) {
    case "exited":
      return [exitLine(result)];
    case "timed_out":
      return [`Timed out after ${seconds(result.timeoutMs)}; ${stoppedHow(result)}.`, exitLine(result)];
    case "cancelled":
      // A null exit code means it never started unless its status was lost (helperLost, exitUnseen).
      return result.exitCode === null && !result.helperLost && !result.exitUnseen
        ? ["Cancelled before it started."]
        : [`Cancelled after ${seconds(result.durationMs)}; ${stoppedHow(result)}.`, exitLine(result)];
    case "background": {
      const bg = result.background!;
      return [
        `Running in the background as ${bg.id} (pid ${bg.pid})${bg.url ? ` at ${bg.url}` : ""}.`,
        `It keeps running after this call and is stopped when mini-cursor exits; do not start it again. To stop it now: kill -- -${bg.pid}`,
      ];
    }
    case "failed_to_start":
      return [`Could not start the command. ${toolErrorMessage(result.error)}`];
  }
}

/** The text the model reads: status first, then notes, then the output. */
export function formatCommandResult(result: CommandResult, notes: string[] = []): string {
  const lines = [...statusLines(result), ...notes];
  if (result.status === "failed_to_start" && !result.output.text) return lines.join("\n");
  const text = result.output.text.replace(/\n$/, "");
  if (result.status === "background") lines.push(text ? "Output so far:" : "No output so far.");
  if (text) lines.push(text);
  else if (result.status !== "background") lines.push("(no output)");
  return lines.join("\n");
}

/** What one call came to: the text the model reads, and whether the command failed. */
export interface CommandOutcome {
  text: string;
  /** Set when the call failed: a non-zero exit, a timeout, a kill, a command that could not start. */
  failure?: FailureDetails;
}

/** Runs one call; never throws (errors come back as text for the model). */
export async function executeCommand(
  ctx: ToolContext,
  input: ExecuteCommandInput,
  config: { signal?: AbortSignal; toolCallId?: string; subagent?: string } = {},
): Promise<string> {
  return (await runExecuteCommand(ctx, input, config)).text;
}

/**
 * A command that exits non-zero (or times out, is killed, cannot start) counts as failed: the
 * trace shows ✗ with its exit code and the ToolMessage has status "error", as Claude Code and
 * Codex mark a failed command. The model still reads everything (exit code first, then the
 * output): for it a non-zero exit is information, and the status tells providers that carry it
 * (is_error) the same thing. A cancelled command is not a failure of the command.
 */
function failureOf(result: CommandResult): FailureDetails | undefined {
  if (result.status === "failed_to_start") return { exitCode: null };
  // Whether it failed is not known: no exit code is made up for the trace (the text says why).
  if (result.helperLost) return {};
  if (result.status === "timed_out") return { exitCode: result.exitCode };
  if (result.status === "exited" && result.exitCode !== 0) return { exitCode: result.exitCode };
  return undefined;
}

async function runExecuteCommand(
  ctx: ToolContext,
  input: ExecuteCommandInput,
  config: { signal?: AbortSignal; toolCallId?: string; subagent?: string },
): Promise<CommandOutcome> {
  const redact = ctx.options.redact ?? [];
  try {
    const ws = await ctx.workspace();
    const cwd = input.workingDirectory
      ? (await resolvePath(ws, input.workingDirectory, { directory: true })).absolute
      : ws.root;
    // Whatever the command does, it may not leave the rules changed (rules-guard.ts).
    const rules = snapshotRules(ws.root);
    const result = await runCommand({
      command: input.command,
      cwd,
      workspaceRoot: ws.root,
      env: ctx.options.env ?? commandEnvironment().scrubbed,
      timeoutMs: input.timeoutMs,
      signal: config.signal,
      registry: ctx.processes,
      spawnSpec: ctx.options.spawnSpec,
      redact,
      onOutput: ctx.options.onOutput
        ? (chunk) =>
            ctx.options.onOutput?.({
              toolCallId: config.toolCallId,
              ...(config.subagent ? { subagent: config.subagent } : {}),
              ...chunk,
              text: redactSecrets(chunk.text, redact),
            })
        : undefined,
    });
    const notes = result.timeoutClamped
      ? [`Note: timeoutMs ${input.timeoutMs} is above the maximum; used ${seconds(MAX_TIMEOUT_MS)}.`]
      : [];
    const undone = rules.undo();
    if (undone) notes.push(undone);
    const failure = failureOf(result);
    return { text: redactSecrets(formatCommandResult(result, notes), redact), ...(failure ? { failure } : {}) };
  } catch (err) {
    return { text: toolErrorMessage(err), failure: {} };
  }
}

export function executeCommandTool(ctx: ToolContext) {
  return declared(
    tool(
      async (input, config) => {
        const conversation = config.configurable?.conversation;
        const outcome = await runExecuteCommand(ctx, input, {
          signal: config.signal,
          toolCallId: config.toolCall?.id,
          ...(typeof conversation === "string" && conversation ? { subagent: conversation } : {}),
        });
        // A failed command: the model reads everything, and the result has status "error" and its exit code.
        if (outcome.failure) throw new ToolFailure(outcome.text, outcome.failure);
        return outcome.text;
      },
      { name: "execute_command", description: EXECUTE_COMMAND_DESCRIPTION, schema: executeCommandSchema },
    ),
    // No paths: a command may touch anything, so calls that name paths wait for it; the turn's other commands do not (guard/order.ts).
    { kind: "execute", shell: { command: "command", cwd: "workingDirectory" } },
  );
}
