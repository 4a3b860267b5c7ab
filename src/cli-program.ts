import { Command, Option } from "commander";
import {
  DEFAULT_APPROVAL,
  DEFAULT_ENGINE,
  DEFAULT_MAX_STEPS,
  DEFAULT_SANDBOX,
  ENGINES,
  SANDBOX_SETTINGS,
} from "./contracts/run-choices.js";
import { APPROVAL_MODES } from "./contracts/modes.js";

/**
 * The CLI's flags and help: the one definition cli.ts parses with, kept apart from cli.ts (which
 * runs as soon as it is loaded) so the docs tests can parse every documented command with it.
 * It parses only; nothing here acts on what it parsed.
 */
export function buildProgram(version: string): Command {
  return new Command("mini-cursor")
    .description(
      "A terminal coding agent: give it a task in plain language and it reads, writes and runs things in the workspace until the task is done.\n" +
        "With neither OPENAI_API_KEY nor OPENAI_BASE_URL set, an embedded offline model runs that follows simple literal instructions.",
    )
    .usage("[options] [task...]")
    .argument(
      "[task...]",
      "what the agent should do (quote it). Text piped in is added to it; with no task (or -) the text piped in is the task, all of it one request. With neither, on a terminal, an interactive session starts",
    )
    .option("-w, --workspace <dir>", "root for every tool (default: the directory you ran the command from)")
    .option("-m, --model <name>", "model name (env MINI_CURSOR_MODEL; provider from OPENAI_API_KEY / OPENAI_BASE_URL)")
    .option("-t, --thread <id>", "save the conversation under this id, or resume it")
    .option("-c, --continue", "resume the latest thread in this workspace")
    .option(
      "--wait-for-thread",
      "if another mini-cursor is writing this thread, wait (saying so) until it ends instead of refusing at once",
    )
    .addOption(
      new Option("--engine <name>", `graph (LangGraph) or loop (hand-rolled) (default ${DEFAULT_ENGINE})`).choices([
        ...ENGINES,
      ]),
    )
    .option("--max-steps <n>", `model turns per task before stopping (default ${DEFAULT_MAX_STEPS})`)
    .addOption(
      new Option(
        "--approval <mode>",
        `suggest: ask before writes and commands; auto-edit: ask before commands; full-auto: ask only for dangerous commands; plan: read-only tools only, the model ends with a plan to accept (default ${DEFAULT_APPROVAL})`,
      ).choices([...APPROVAL_MODES]),
    )
    .addOption(
      new Option(
        "--sandbox <mode>",
        `run commands in bubblewrap: auto (when installed), on (refuse to start without it) or off (default ${DEFAULT_SANDBOX})`,
      ).choices([...SANDBOX_SETTINGS]),
    )
    .option("--no-network", "commands get no network access (inside the sandbox)")
    .option(
      "--record <file>",
      "save every model response of the run to this new JSON Lines file (for --replay); an existing file is never overwritten",
    )
    .option(
      "--replay <file>",
      "answer from a recording instead of a model (no provider or key); the tools run for real",
    )
    .option("--threads", "list the saved threads in the workspace and exit")
    .option(
      "--undo",
      "with --thread or --continue: put back the files the thread's last turn changed, drop that turn, and exit",
    )
    .option(
      "--force",
      "with --undo: also overwrite files changed by hand since the agent's step (otherwise it asks, or refuses off a terminal)",
    )
    .option("--mcp-list", "start the configured MCP servers, show their state and tools, stop them and exit")
    .option(
      "--checkpointer <url>",
      "keep threads in PostgreSQL (postgres://user:password@host:5432/db) instead of the workspace's SQLite file (env MINI_CURSOR_CHECKPOINTER)",
    )
    .option(
      "--each-line",
      "with no task: a session that reads its requests and /commands from stdin, one per line (a script), instead of taking what is piped in as one task",
    )
    .option("--json", "print one JSON object per event on stdout (JSON Lines) and nothing else there")
    .option("--no-color", "plain output (also NO_COLOR)")
    .option("--verbose", "show stack traces for errors (also DEBUG=1)")
    .version(version, "-v, --version")
    .helpOption("-h, --help", "show this help")
    .addHelpText(
      "after",
      `
Examples (in your project's folder; from mini-cursor's own clone, npm start -- --workspace ~/my-app …):
  mini-cursor "list the files here"
  mini-cursor --approval full-auto "create a React todo app with Vite"
  npm start -- --workspace ~/my-app --approval full-auto --replay demos/todo-app.jsonl "create a React todo app with Vite"
  mini-cursor --approval plan "add a /health route with a test"   (read-only; ends with a plan to accept)
  mini-cursor --thread demo "what is in package.json?"   then   mini-cursor --thread demo "and its scripts?"
  npm test 2>&1 | mini-cursor "explain this error"   (text piped in is added to the task)

The workspace is the folder you run it from, never mini-cursor's own folder unless named with --workspace.

Exit codes: 0 done, 1 runtime failure (provider unreachable, rejected key, unknown model, a model
stopped by the loop guard, a run a hook stopped, --sandbox on without bubblewrap, a damaged
state.sqlite in the state folder),
2 usage error, 3 step limit reached, 4 nothing done (every action it asked for was declined or
needed an approval nobody could give), 130 interrupted (Ctrl-C, SIGTERM, closed terminal).`,
    )
    .exitOverride()
    .showSuggestionAfterError();
}
