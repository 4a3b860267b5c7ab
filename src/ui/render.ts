import { Chalk, type ChalkInstance } from "chalk";
import { formatCost } from "../models/cost.js";
import type { AgentEvent, TokenUsage } from "../contracts/events.js";
import { todoCounts } from "../tools/todos.js";
import type { Todo } from "../contracts/tools.js";
import { block, jsonLine, type Piece, print, printJson, printJsonLines, type Style, styled } from "./output.js";
import { createSpinner, type Spinner } from "./spinner.js";
import { createOutputView, type HiddenOutput, type OutputView } from "./output-view.js";
import { savedOutputOf } from "../workspace/output-store.js";

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

/**
 * Arguments on one line, long values shortened so a 5 KB file write stays one line. As the model
 * wrote them: ui/output.ts gates them when they are printed.
 */
export function formatArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => {
      let text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value ?? null);
      if (text.length > MAX_ARG_CHARS) {
        const size = typeof value === "string" ? `, ${value.split("\n").length} lines` : "";
        text = `${text.slice(0, MAX_ARG_CHARS - 1)}…"${size ? ` (${formatBytes(Buffer.byteLength(String(value)))}${size})` : ""}`;
      }
      return `${key}=${text}`;
    })
    .join(" ");
}

/** An edit as the trace shows it (one line): a command as typed, other calls' arguments. */
export function editedSummary(tool: string, args: Record<string, unknown> | undefined): string {
  if (!args) return "no arguments given (asked again)";
  if (tool === "execute_command" && typeof args.command === "string")
    return args.command.length > MAX_ARG_CHARS ? `${args.command.slice(0, MAX_ARG_CHARS)}…` : args.command;
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
const TODO_STYLES: Partial<Record<Todo["status"], Style>> = { completed: "green", in_progress: "current" };

/** The todo list as a checklist: a header line with the counts, then one line per item (the model's text, gated when printed). */
export function formatTodos(todos: readonly Todo[]): string[] {
  if (todos.length === 0) return ["Todo list cleared."];
  const c = todoCounts(todos);
  return [
    `Todo list (${c.completed}/${todos.length} done)`,
    ...todos.map((t) => `${TODO_MARK[t.status]} ${t.content}`),
  ];
}

const REASON_TEXT: Record<string, string> = {
  done: "Done",
  max_steps: "Stopped at the step limit",
  interrupted: "Interrupted",
  error: "Failed",
  loop_guard: "Stopped: the model was repeating itself",
  hook_stop: "Stopped by a hook",
  not_run: "Not done: what it asked to do was not run",
};

/** A diff line's colour by how it starts (others dim). */
const DIFF_COLOURS = [
  ["+", "green"],
  ["-", "red"],
  ["@@", "cyan"],
] as const;

/** An approval's verdict for the decisions that approve as asked. */
const APPROVED: Record<string, string> = {
  always: "approved (always, this session)",
  "always-project": "approved (always, saved for this project)",
};

type HookEvent = Extract<AgentEvent, { type: "hook" }>;

/** A hook's verdict by its outcome; `before`: it ran before the call, which its failure then blocks. */
const HOOK_VERDICTS: Record<HookEvent["outcome"], (before: boolean, exit: HookEvent["exitCode"]) => Piece> = {
  passed: () => styled("green", "passed"),
  blocked: (before, exit) => styled("red", `blocked ${before ? "the call" : "it"} (exit ${exit})`),
  timed_out: (before) => styled("red", before ? "timed out: the call is blocked" : "timed out"),
  did_not_start: (before) => styled("red", before ? "could not start: the call is blocked" : "could not start"),
  failed: (_, exit) => styled("yellow", `failed (exit ${exit})`),
  cancelled: () => styled("dim", "cancelled"),
};

/** A hook's line up to its verdict: "⚑ before write_file: hook <its name> ". */
const hookHead = (event: HookEvent): Piece[] => [
  styled("magenta", "⚑"),
  ` ${event.event}`,
  event.tool ? ` ${event.tool}` : "",
  ": hook ",
  styled("dim", event.hook.slice(0, 80)),
  " ",
];

/** Text's lines, "\r\n" or "\n" ending each. */
const linesOf = (text: string) => text.split(/\r?\n/);
/** The line that ends a live output the trace stopped showing. */
const OUTPUT_CUT_LINE = "… more output, not shown here: its last lines follow when the call ends";

/** What the trace says at a call's end about the output it stopped showing, line by line. */
function hiddenOutputLines(hidden: HiddenOutput, result: string): string[] {
  const saved = savedOutputOf(result);
  return [
    `… ${hidden.lines.toLocaleString("en-US")} more line${hidden.lines === 1 ? "" : "s"} (${formatBytes(hidden.chars)}) not shown; the last ${hidden.tail.length}:`,
    ...hidden.tail,
    !saved
      ? "… the whole output is in the call's result, which the model reads (--json shows every line)"
      : saved.firstChars
        ? `… its first ${saved.firstChars} characters are saved in ${saved.path}`
        : `… the whole output is saved in ${saved.path}`,
  ];
}

export function createPrettyRenderer(options: RenderOptions): Renderer {
  const out = options.out ?? process.stdout;
  const c: ChalkInstance = new Chalk({ level: options.color ? 1 : 0 });
  const spinner: Spinner = createSpinner(out, options.spinner, c);
  let midLine = false;
  let streamedThisStep = false;
  let outputMidLine = false;
  /** Each task call's label (type: description), for its sub-agent's lines. */
  const subagentLabels = new Map<string, string>();
  /** Each running call's live output view: the trace shows a bounded part of it (output-view.ts). */
  const outputViews = new Map<string, OutputView>();
  const viewOf = (id: string) => {
    let view = outputViews.get(id);
    if (!view) outputViews.set(id, (view = createOutputView()));
    return view;
  };
  /** What the call's view left out, said at its end (undefined when it showed everything). */
  const endView = (id: string, result: string): string[] | undefined => {
    const hidden = outputViews.get(id)?.hidden();
    outputViews.delete(id);
    return hidden && hiddenOutputLines(hidden, result);
  };

  // Everything leaves through here, as pieces ui/output.ts gates (a plain string is one line).
  const write = (piece: Piece, endsLine: boolean) => {
    spinner.stop();
    print(out, piece, c);
    midLine = !endsLine;
  };
  // Starting the spinner mid-line would erase that line when it stops.
  const busy = (label: string) => {
    if (!midLine) spinner.start(label);
  };
  const line = (...pieces: Piece[]) => {
    if (midLine) write(block("\n"), true);
    write([pieces, block("\n")], true);
  };

  /**
   * A sub-agent's command output not yet ended by a line break, by call: parallel sub-agents'
   * output interleaves, so each of its lines is shown whole, with its sub-agent's label.
   */
  const subagentOutput = new Map<string, string>();
  const flushSubagentOutput = (tag: Piece, callId: string) => {
    const rest = subagentOutput.get(callId);
    subagentOutput.delete(callId);
    if (rest) line(tag, styled("dim", "│ ", rest));
  };

  /** A sub-agent's event as lines under its task call, or nothing (its tokens, steps and usage). */
  const subagentEvent = (event: AgentEvent, id: string) => {
    const tag = styled("dim", "  ⎿ [", subagentLabels.get(id) ?? id, "] ");
    // Call ids repeat across sub-agents (servers that number a response's calls): keyed by both.
    const callKey = (callId: string) => `${id}\0${callId}`;
    // Text of several lines: each line under the label, so none of it stands on a line of its own.
    const tagged = (mark: (text: string) => Piece, text: string) => {
      for (const l of linesOf(text)) line(tag, mark(l));
    };
    switch (event.type) {
      case "tool_call":
        line(tag, styled("yellow", "→"), " ", styled("bold", event.name), " ", styled("dim", formatArgs(event.args)));
        busy(`running ${event.name}`);
        break;
      case "tool_output": {
        const { show, filled } = viewOf(callKey(event.id)).take(event.text);
        const lines = linesOf((subagentOutput.get(callKey(event.id)) ?? "") + show);
        subagentOutput.set(callKey(event.id), lines.pop()!);
        for (const l of lines) line(tag, styled("dim", "│ ", l));
        if (filled) {
          flushSubagentOutput(tag, callKey(event.id));
          line(tag, styled("dim", "│ ", OUTPUT_CUT_LINE));
        }
        busy("running");
        break;
      }
      case "hook":
        line(
          tag,
          ...hookHead(event),
          event.outcome === "passed" ? styled("green", "passed") : styled("red", event.outcome.replaceAll("_", " ")),
        );
        break;
      case "tool_result": {
        flushSubagentOutput(tag, callKey(event.id));
        for (const l of endView(callKey(event.id), event.content) ?? []) line(tag, styled("dim", "│ ", l));
        const ok = event.status === "success";
        const size = `${event.content.split("\n").length} lines, ${formatBytes(Buffer.byteLength(event.content))}`;
        line(
          tag,
          ok ? styled("green", "✓") : styled("red", "✗"),
          " ",
          event.name,
          " ",
          styled("dim", `${event.notRun ? "not run, " : ""}${size}`),
        );
        break;
      }
      case "approval":
        line(
          tag,
          styled("magenta", "?"),
          " ",
          event.request.tool,
          ": ",
          event.response.decision === "deny" || event.response.unattended
            ? styled("red", "declined, not run")
            : styled("green", "approved"),
        );
        break;
      case "final":
        line(tag, styled("dim", "report:"), " ", (event.text.split("\n")[0] ?? "").slice(0, 160));
        break;
      case "notice":
      case "loop_guard":
        if (!("wait" in event && event.wait)) tagged((l) => styled("yellow", "⚠ ", l), event.message);
        break;
      case "error":
        tagged((l) => styled("red", "✗ ", l), event.message);
        break;
      default:
        break;
    }
  };

  return {
    banner(info) {
      line(styled("bold", `mini-cursor ${info.version}`));
      line("  ", styled("dim", "workspace"), " ", info.workspace);
      line("  ", styled("dim", "model    "), " ", info.model);
      line(
        "  ",
        styled("dim", "thread   "),
        " ",
        info.threadId,
        info.resumed ? " (resumed)" : "",
        "  ",
        styled("dim", `next time: --thread ${info.threadId}`),
      );
      line("  ", styled("dim", "approval "), " ", info.approval, "   ", styled("dim", "engine"), " ", info.engine);
      if (info.sandbox) line("  ", styled("dim", "sandbox  "), " ", info.sandbox);
      line("");
    },
    note(text) {
      line(block(text));
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
          if (options.echoRequest !== false) line(styled("cyan", "❯"), " ", block(shortenRequest(event.task)));
          break;
        case "step":
          streamedThisStep = false;
          line(styled("badge", ` step ${event.step} `));
          busy("thinking");
          break;
        case "token":
          streamedThisStep = true;
          write(block(event.text), event.text.endsWith("\n"));
          break;
        case "tool_call":
          line(styled("yellow", "→"), " ", styled("bold", event.name), " ", styled("dim", formatArgs(event.args)));
          busy(`running ${event.name}`);
          break;
        case "tool_output": {
          const { show, filled } = viewOf(event.id).take(event.text);
          if (show) {
            const text = show.replace(/\r?\n$/, "");
            const prefix = outputMidLine ? "" : "  │ ";
            const ends = show.endsWith("\n");
            write([styled("dim", block(prefix + linesOf(text).join("\n  │ "))), ends && block("\n")], ends);
            outputMidLine = !ends;
          }
          if (filled) {
            line(styled("dim", "  │ ", OUTPUT_CUT_LINE));
            outputMidLine = false;
          }
          busy("running");
          break;
        }
        case "tool_result": {
          outputMidLine = false;
          for (const l of endView(event.id, event.content) ?? []) line(styled("dim", "  │ ", l));
          // The status is the tool's own (tools/errors.ts), never guessed from the text.
          const ok = event.status === "success";
          const mark = ok ? styled("green", "✓") : styled("red", "✗");
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
          line("  ", mark, " ", event.name, " ", styled("dim", `${how}${size}, ${formatDuration(event.durationMs)}`));
          if (event.diff && ok) {
            for (const d of diffLines(event.diff)) {
              const colour = DIFF_COLOURS.find(([mark]) => d.startsWith(mark))?.[1] ?? "dim";
              line(styled(colour, `    ${d.slice(0, 200)}`));
            }
            break;
          }
          // The checklist (the todos event) follows and says more than the tool's confirmation.
          if (event.name === "write_todos" && ok) break;
          const preview = event.content.split("\n").slice(0, RESULT_PREVIEW_LINES);
          for (const p of preview) line(styled("dim", `    ${p.slice(0, 160)}`));
          break;
        }
        case "compaction":
          line(
            styled(
              "dim",
              `  ⋯ context compacted: ${event.summarised} older messages summarised, ${formatTokens(event.tokensBefore)} → ${formatTokens(event.tokensAfter)} tokens`,
            ),
          );
          busy("thinking");
          break;
        case "loop_guard":
          line(
            styled(
              "yellow",
              "  ⚠ ",
              event.action === "stop"
                ? block(event.message)
                : `${event.tool} called ${event.repeats} times in a row with the same arguments; the model was told to change course.`,
            ),
          );
          break;
        case "approval": {
          const verdict = event.response.unattended
            ? styled("red", "not run, because nobody could be asked (not a terminal)")
            : event.response.decision === "deny"
              ? styled("red", "declined, not run")
              : event.response.decision === "edit"
                ? styled("green", "edited: ", editedSummary(event.request.tool, event.response.args))
                : styled("green", APPROVED[event.response.decision] ?? "approved");
          line(
            "  ",
            styled("magenta", "?"),
            " ",
            event.request.tool,
            ": ",
            verdict,
            event.response.feedback ? styled("dim", " — ", event.response.feedback) : undefined,
          );
          // The question stopped the spinner; the approved call now runs, so live status resumes.
          if (event.response.decision !== "deny") busy(`running ${event.request.tool}`);
          break;
        }
        case "hook": {
          const verdict = HOOK_VERDICTS[event.outcome](event.event === "before", event.exitCode);
          line("  ", ...hookHead(event), verdict, " ", styled("dim", formatDuration(event.durationMs)));
          if (event.message && event.outcome !== "passed")
            for (const l of event.message.split("\n").slice(0, RESULT_PREVIEW_LINES))
              line(styled("dim", `    ${l.slice(0, 160)}`));
          break;
        }
        case "todos": {
          const [head, ...items] = formatTodos(event.todos);
          line("  ", styled("blue", "☰"), " ", styled("bold", head!));
          event.todos.forEach((t, i) => {
            const style = TODO_STYLES[t.status];
            line("    ", style ? styled(style, items[i]!) : items[i]);
          });
          busy("thinking");
          break;
        }
        case "thinking": {
          // Collapsed by default: thinking is often longer than the answer.
          const lines = linesOf(event.text);
          if (options.verbose) for (const l of lines) line(styled("dim", `  ┊ ${l}`));
          else
            line(
              styled(
                "dim",
                `  ┊ thought for ${lines.length} line${lines.length === 1 ? "" : "s"} (--verbose shows it)`,
              ),
            );
          break;
        }
        case "notice":
          // A wait (a slow provider, a retry) is the spinner's text on a terminal, a line elsewhere.
          if (event.wait) {
            if (options.spinner) busy(event.message);
            else line(styled("dim", "  … ", event.message));
            break;
          }
          line(styled("yellow", "  ⚠ ", block(event.message)));
          break;
        case "usage":
          break;
        case "final":
          if (!streamedThisStep && event.text) line(block(event.text));
          else if (midLine) write(block("\n"), true);
          break;
        case "error":
          line(styled("red", "✗ ", block(event.message)));
          if (options.verbose && event.stack) line(styled("dim", block(event.stack)));
          break;
        case "run_end":
          spinner.stop();
          line("");
          line(
            event.reason === "done" ? styled("green", "✔") : styled("yellow", "■"),
            ` ${REASON_TEXT[event.reason] ?? event.reason}: ` +
              `${event.steps} step${event.steps === 1 ? "" : "s"}, ${event.toolCalls} tool call${event.toolCalls === 1 ? "" : "s"}, ` +
              `${formatUsage(event.usage)}${event.usage.cost !== undefined ? `, ${formatCost(event.usage.cost)}` : ""}, ${formatDuration(event.durationMs)}`,
          );
          break;
      }
    },
  };
}

/** `--json`: one event per line on stdout and nothing else there; notes go to stderr, gated as text. */
export function createJsonRenderer(options: Pick<RenderOptions, "verbose" | "out" | "err">): Renderer {
  const out = options.out ?? process.stdout;
  const err = options.err ?? process.stderr;
  // A streamed answer is many token events: theirs go out together, in one write per turn of the
  // event loop (a write to a pipe is a system call, on Linux a blocking one: ~5% of a step's CPU
  // with one per token, BENCHMARKS.md), flushed by the next other event, that turn's end, or exit.
  let tokens = "";
  let exitHooked = false;
  const flush = () => {
    if (!tokens) return;
    const text = tokens;
    tokens = "";
    printJsonLines(out, text);
  };
  return {
    banner() {},
    note(text) {
      print(err, [block(text), block("\n")]);
    },
    pause() {},
    event(event) {
      if (event.type === "token") {
        if (!tokens) setImmediate(flush);
        if (!exitHooked) process.once("exit", flush);
        exitHooked = true;
        tokens += jsonLine(event);
        return;
      }
      flush();
      printJson(out, event.type === "error" && !options.verbose ? { type: event.type, message: event.message } : event);
    },
  };
}
