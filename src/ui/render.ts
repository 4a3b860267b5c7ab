import { Chalk, type ChalkInstance } from "chalk";
import { formatCost } from "../models/cost.js";
import type { AgentEvent, TokenUsage } from "../agent/events.js";
import { todoCounts, type Todo } from "../tools/todos.js";
import { sanitizeForTerminal } from "./sanitize.js";
import { gateValue } from "../workspace/output-gate.js";
import { createSpinner, type Spinner } from "./spinner.js";

/** Longest argument value shown in a tool-call line before it is shortened. */
const MAX_ARG_CHARS = 80;
/** Lines of a tool result shown under it in the trace (the model gets all of it). */
const RESULT_PREVIEW_LINES = 3;
/** A request longer than this is echoed in the trace as its head and tail (the model gets all of it). */
export const MAX_ECHO_CHARS = 600;
const ECHO_HEAD_CHARS = 300;
const ECHO_TAIL_CHARS = 200;
/** Lines of an edit's diff shown in the trace and the approval prompt. */
export const MAX_DIFF_LINES = 60;

export interface BannerInfo {
  version: string;
  workspace: string;
  model: string;
  threadId: string;
  resumed: boolean;
  approval: string;
  engine: string;
  /** Whether commands run sandboxed, in one line. */
  sandbox?: string;
}

export interface Renderer {
  banner(info: BannerInfo): void;
  event(event: AgentEvent): void;
  /** A line of CLI commentary (not an event): shown in pretty mode, on stderr in JSON mode. */
  note(text: string): void;
  /** Stops any animation before something else writes to the terminal. */
  pause(): void;
}

export interface RenderOptions {
  color: boolean;
  /** Animate a spinner (only when stdout is a terminal). */
  spinner: boolean;
  verbose: boolean;
  /** Print the request at the start of a run (false when the prompt line already shows it). */
  echoRequest?: boolean;
  out?: NodeJS.WritableStream;
  err?: NodeJS.WritableStream;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A long request as the trace echoes it: head … size … tail, so a pasted log is not printed back whole. */
export function shortenRequest(text: string): string {
  if (text.length <= MAX_ECHO_CHARS) return text;
  const lines = text.split("\n").length;
  const size = `${formatBytes(Buffer.byteLength(text))}, ${lines} line${lines === 1 ? "" : "s"}`;
  return `${text.slice(0, ECHO_HEAD_CHARS)} … [request of ${size}; the middle is not shown here] … ${text.slice(-ECHO_TAIL_CHARS)}`;
}

function formatTokens(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** Arguments on one line, long values shortened so a 5 KB file write stays one line. */
export function formatArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => {
      let text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value ?? null);
      if (text.length > MAX_ARG_CHARS) {
        const size = typeof value === "string" ? `, ${value.split("\n").length} lines` : "";
        text = `${text.slice(0, MAX_ARG_CHARS - 1)}…"${size ? ` (${formatBytes(Buffer.byteLength(String(value)))}${size})` : ""}`;
      }
      return `${key}=${sanitizeForTerminal(text)}`;
    })
    .join(" ");
}

/** An edit as the trace shows it: a command as typed, other calls' arguments on one line. */
export function editedSummary(tool: string, args: Record<string, unknown> | undefined): string {
  if (!args) return "no arguments given (asked again)";
  if (tool === "execute_command" && typeof args.command === "string")
    return sanitizeForTerminal(
      args.command.length > MAX_ARG_CHARS ? `${args.command.slice(0, MAX_ARG_CHARS)}…` : args.command,
    );
  return formatArgs(args);
}

/**
 * A unified diff cut to `maxLines` (the ---/+++ header left out), with a note of what was cut.
 * A diff of several files (apply_patch) keeps one "path:" line before each file's hunks.
 */
export function diffLines(diff: string, maxLines = MAX_DIFF_LINES): string[] {
  const all = diff.split("\n");
  const isHeader = (i: number) => all[i]!.startsWith("--- ") && all[i + 1]?.startsWith("+++ ");
  const files = all.filter((_, i) => isHeader(i)).length;
  const lines: string[] = [];
  for (let i = 0; i < all.length; i++) {
    if (all[i]!.startsWith("Index: ")) continue;
    if (isHeader(i)) {
      if (files > 1) lines.push(`${all[i + 1]!.slice(4).replace(/^b\//, "")}:`);
      i++;
      continue;
    }
    lines.push(all[i]!);
  }
  if (lines.length <= maxLines) return lines;
  return [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more diff lines`];
}

export function formatUsage(usage: TokenUsage): string {
  return `${formatTokens(usage.input)} tokens in / ${formatTokens(usage.output)} out${usage.estimated ? " (estimated)" : ""}`;
}

const TODO_MARK: Record<Todo["status"], string> = { completed: "[x]", in_progress: "[>]", pending: "[ ]" };

/** The todo list as a checklist: a header line with the counts, then one line per item. */
export function formatTodos(todos: readonly Todo[]): string[] {
  if (todos.length === 0) return ["Todo list cleared."];
  const c = todoCounts(todos);
  return [
    `Todo list (${c.completed}/${todos.length} done)`,
    ...todos.map((t) => `${TODO_MARK[t.status]} ${sanitizeForTerminal(t.content)}`),
  ];
}

const REASON_TEXT: Record<string, string> = {
  done: "Done",
  max_steps: "Stopped at the step limit",
  interrupted: "Interrupted",
  error: "Failed",
  loop_guard: "Stopped: the model was repeating itself",
  not_run: "Not done: what it asked to do was not run",
};

export function createPrettyRenderer(options: RenderOptions): Renderer {
  const out = options.out ?? process.stdout;
  const c: ChalkInstance = new Chalk({ level: options.color ? 1 : 0 });
  const spinner: Spinner = createSpinner(out, options.spinner, c);
  let midLine = false;
  let streamedThisStep = false;
  let outputMidLine = false;
  /** Each task call's label (type: description), for its sub-agent's lines. */
  const subagentLabels = new Map<string, string>();

  /**
   * A sub-agent's command output not yet ended by a line break, by call: parallel sub-agents'
   * output interleaves, so each of its lines is shown whole, with its sub-agent's label.
   */
  const subagentOutput = new Map<string, string>();
  const flushSubagentOutput = (tag: string, callId: string) => {
    const rest = subagentOutput.get(callId);
    subagentOutput.delete(callId);
    if (rest) line(`${tag}${c.dim(`│ ${rest}`)}`);
  };

  /** A sub-agent's event as lines under its task call, or nothing (its tokens, steps and usage). */
  const subagentEvent = (event: AgentEvent, id: string) => {
    const tag = c.dim(`  ⎿ [${sanitizeForTerminal(subagentLabels.get(id) ?? id)}] `);
    switch (event.type) {
      case "tool_call":
        line(`${tag}${c.yellow("→")} ${c.bold(sanitizeForTerminal(event.name))} ${c.dim(formatArgs(event.args))}`);
        busy(`running ${event.name}`);
        break;
      case "tool_output": {
        const lines = ((subagentOutput.get(event.id) ?? "") + sanitizeForTerminal(event.text)).split("\n");
        subagentOutput.set(event.id, lines.pop()!);
        for (const l of lines) line(`${tag}${c.dim(`│ ${l}`)}`);
        busy("running");
        break;
      }
      case "hook":
        line(
          `${tag}${c.magenta("⚑")} ${event.event} ${sanitizeForTerminal(event.tool)}: hook ${c.dim(sanitizeForTerminal(event.hook.slice(0, 80)))} ${event.outcome === "passed" ? c.green("passed") : c.red(event.outcome.replaceAll("_", " "))}`,
        );
        break;
      case "tool_result": {
        flushSubagentOutput(tag, event.id);
        const ok = event.status === "success";
        const size = `${event.content.split("\n").length} lines, ${formatBytes(Buffer.byteLength(event.content))}`;
        line(
          `${tag}${ok ? c.green("✓") : c.red("✗")} ${event.name} ${c.dim(`${event.notRun ? "not run, " : ""}${size}`)}`,
        );
        break;
      }
      case "approval":
        line(
          `${tag}${c.magenta("?")} ${sanitizeForTerminal(event.request.tool)}: ${event.response.decision === "deny" || event.response.unattended ? c.red("declined, not run") : c.green("approved")}`,
        );
        break;
      case "final":
        line(`${tag}${c.dim("report:")} ${sanitizeForTerminal((event.text.split("\n")[0] ?? "").slice(0, 160))}`);
        break;
      case "notice":
      case "loop_guard":
        if (!("wait" in event && event.wait)) line(`${tag}${c.yellow(`⚠ ${sanitizeForTerminal(event.message)}`)}`);
        break;
      case "error":
        line(`${tag}${c.red(`✗ ${sanitizeForTerminal(event.message)}`)}`);
        break;
      default:
        break;
    }
  };

  // Everything but our own colours goes through sanitizeForTerminal before it gets here.
  const write = (text: string) => {
    spinner.stop();
    out.write(text);
    midLine = !text.endsWith("\n");
  };
  // Starting the spinner mid-line would erase that line when it stops.
  const busy = (label: string) => {
    if (!midLine) spinner.start(label);
  };
  const line = (text: string) => {
    if (midLine) write("\n");
    write(`${text}\n`);
  };

  return {
    banner(info) {
      line(c.bold(`mini-cursor ${info.version}`));
      line(`  ${c.dim("workspace")} ${info.workspace}`);
      line(`  ${c.dim("model    ")} ${info.model}`);
      line(
        `  ${c.dim("thread   ")} ${info.threadId}${info.resumed ? " (resumed)" : ""}  ${c.dim(`next time: --thread ${info.threadId}`)}`,
      );
      line(`  ${c.dim("approval ")} ${info.approval}   ${c.dim("engine")} ${info.engine}`);
      if (info.sandbox) line(`  ${c.dim("sandbox  ")} ${info.sandbox}`);
      line("");
    },
    note(text) {
      line(sanitizeForTerminal(text));
    },
    pause() {
      spinner.stop();
    },
    event(event) {
      if (event.subagent) return subagentEvent(event, event.subagent);
      if (event.type === "tool_call" && event.name === "task")
        subagentLabels.set(event.id, `${String(event.args.subagent_type)}: ${String(event.args.description)}`);
      switch (event.type) {
        case "run_start":
          if (options.echoRequest !== false) line(`${c.cyan("❯")} ${sanitizeForTerminal(shortenRequest(event.task))}`);
          break;
        case "step":
          streamedThisStep = false;
          line(c.bgGreen.black(` step ${event.step} `));
          busy("thinking");
          break;
        case "token":
          streamedThisStep = true;
          write(sanitizeForTerminal(event.text));
          break;
        case "tool_call":
          line(`${c.yellow("→")} ${c.bold(sanitizeForTerminal(event.name))} ${c.dim(formatArgs(event.args))}`);
          busy(`running ${event.name}`);
          break;
        case "tool_output": {
          const text = sanitizeForTerminal(event.text).replace(/\n$/, "");
          const prefix = outputMidLine ? "" : "  │ ";
          write(c.dim(prefix + text.split("\n").join("\n  │ ")) + (event.text.endsWith("\n") ? "\n" : ""));
          outputMidLine = !event.text.endsWith("\n");
          busy("running");
          break;
        }
        case "tool_result": {
          outputMidLine = false;
          // The status is the tool's own (tools/errors.ts), never guessed from the text.
          const ok = event.status === "success";
          const mark = ok ? c.green("✓") : c.red("✗");
          const how = `${event.editedArgs ? "edited by you, " : ""}${
            event.notRun
              ? "not run, "
              : event.exitCode !== undefined
                ? event.exitCode === null
                  ? "did not start, "
                  : `exit ${event.exitCode}, `
                : ""
          }`;
          const size = `${event.content.split("\n").length} lines, ${formatBytes(Buffer.byteLength(event.content))}`;
          line(`  ${mark} ${event.name} ${c.dim(`${how}${size}, ${formatDuration(event.durationMs)}`)}`);
          if (event.diff && ok) {
            for (const d of diffLines(event.diff)) {
              const colour = d.startsWith("+")
                ? c.green
                : d.startsWith("-")
                  ? c.red
                  : d.startsWith("@@")
                    ? c.cyan
                    : c.dim;
              line(colour(`    ${sanitizeForTerminal(d.slice(0, 200))}`));
            }
            break;
          }
          // The checklist (the todos event) follows and says more than the tool's confirmation.
          if (event.name === "write_todos" && ok) break;
          const preview = event.content.split("\n").slice(0, RESULT_PREVIEW_LINES);
          for (const p of preview) line(c.dim(`    ${sanitizeForTerminal(p.slice(0, 160))}`));
          break;
        }
        case "compaction":
          line(
            c.dim(
              `  ⋯ context compacted: ${event.summarised} older messages summarised, ${formatTokens(event.tokensBefore)} → ${formatTokens(event.tokensAfter)} tokens`,
            ),
          );
          busy("thinking");
          break;
        case "loop_guard":
          line(
            c.yellow(
              `  ⚠ ${sanitizeForTerminal(event.action === "stop" ? event.message : `${event.tool} called ${event.repeats} times in a row with the same arguments; the model was told to change course.`)}`,
            ),
          );
          break;
        case "approval": {
          const verdict = event.response.unattended
            ? c.red("not run, because nobody could be asked (not a terminal)")
            : event.response.decision === "deny"
              ? c.red("declined, not run")
              : event.response.decision === "edit"
                ? c.green(`edited: ${editedSummary(event.request.tool, event.response.args)}`)
                : c.green(
                    event.response.decision === "always"
                      ? "approved (always, this session)"
                      : event.response.decision === "always-project"
                        ? "approved (always, saved for this project)"
                        : "approved",
                  );
          line(
            `  ${c.magenta("?")} ${sanitizeForTerminal(event.request.tool)}: ${verdict}${event.response.feedback ? c.dim(` — ${sanitizeForTerminal(event.response.feedback)}`) : ""}`,
          );
          // The question stopped the spinner; the approved call now runs, so live status resumes.
          if (event.response.decision !== "deny") busy(`running ${event.request.tool}`);
          break;
        }
        case "hook": {
          const verdict =
            event.outcome === "passed"
              ? c.green("passed")
              : event.outcome === "blocked"
                ? c.red(`blocked the call (exit ${event.exitCode})`)
                : event.outcome === "timed_out"
                  ? c.red(event.event === "before" ? "timed out: the call is blocked" : "timed out")
                  : event.outcome === "did_not_start"
                    ? c.red(event.event === "before" ? "could not start: the call is blocked" : "could not start")
                    : event.outcome === "failed"
                      ? c.yellow(`failed (exit ${event.exitCode})`)
                      : c.dim("cancelled");
          line(
            `  ${c.magenta("⚑")} ${event.event === "before" ? "before" : "after"} ${sanitizeForTerminal(event.tool)}: hook ${c.dim(sanitizeForTerminal(event.hook.slice(0, 80)))} ${verdict} ${c.dim(formatDuration(event.durationMs))}`,
          );
          if (event.message && event.outcome !== "passed")
            for (const l of event.message.split("\n").slice(0, RESULT_PREVIEW_LINES))
              line(c.dim(`    ${sanitizeForTerminal(l.slice(0, 160))}`));
          break;
        }
        case "todos": {
          const [head, ...items] = formatTodos(event.todos);
          line(`  ${c.blue("☰")} ${c.bold(head!)}`);
          event.todos.forEach((t, i) => {
            const colour = t.status === "completed" ? c.green : t.status === "in_progress" ? c.yellow.bold : c.reset;
            line(`    ${colour(items[i]!)}`);
          });
          busy("thinking");
          break;
        }
        case "thinking": {
          // Collapsed by default: thinking is often longer than the answer.
          const lines = event.text.split("\n");
          if (options.verbose) for (const l of lines) line(c.dim(`  ┊ ${l}`));
          else line(c.dim(`  ┊ thought for ${lines.length} line${lines.length === 1 ? "" : "s"} (--verbose shows it)`));
          break;
        }
        case "notice":
          // A wait (a slow provider, a retry) is the spinner's text on a terminal, a line elsewhere.
          if (event.wait) {
            if (options.spinner) busy(sanitizeForTerminal(event.message));
            else line(c.dim(`  … ${sanitizeForTerminal(event.message)}`));
            break;
          }
          line(c.yellow(`  ⚠ ${event.message}`));
          break;
        case "usage":
          break;
        case "final":
          if (!streamedThisStep && event.text) line(sanitizeForTerminal(event.text));
          else if (midLine) write("\n");
          break;
        case "error":
          line(c.red(`✗ ${sanitizeForTerminal(event.message)}`));
          if (options.verbose && event.stack) line(c.dim(event.stack));
          break;
        case "run_end":
          spinner.stop();
          line("");
          line(
            `${event.reason === "done" ? c.green("✔") : c.yellow("■")} ${REASON_TEXT[event.reason] ?? event.reason}: ` +
              `${event.steps} step${event.steps === 1 ? "" : "s"}, ${event.toolCalls} tool call${event.toolCalls === 1 ? "" : "s"}, ` +
              `${formatUsage(event.usage)}${event.usage.cost !== undefined ? `, ${formatCost(event.usage.cost)}` : ""}, ${formatDuration(event.durationMs)}`,
          );
          break;
      }
    },
  };
}

/** `--json`: one event per line on stdout and nothing else there; notes go to stderr. */
export function createJsonRenderer(options: Pick<RenderOptions, "verbose" | "out" | "err">): Renderer {
  const out = options.out ?? process.stdout;
  const err = options.err ?? process.stderr;
  return {
    banner() {},
    note(text) {
      err.write(`${text}\n`);
    },
    pause() {},
    event(event) {
      const data = event.type === "error" && !options.verbose ? { type: event.type, message: event.message } : event;
      out.write(`${JSON.stringify(gateValue(data, { controls: false }))}\n`);
    },
  };
}
