import { z } from "zod";
import { shellQuote } from "../shell-quote.js";
import { escapeRegExp } from "../workspace/redact.js";

/**
 * Argument names models trained on other agents send: Codex (`workdir`, `timeout_ms`, `cmd`, a
 * command as an argv array), opencode (`workdir`, `timeout`, `include`), Gemini CLI (`dir_path`,
 * `start_line`/`end_line`, `include_pattern`, `allow_multiple`) and Claude Code (`file_path`,
 * `old_string`, `-i`, `-C`, `run_in_background`). Each is either honoured (renamed or converted
 * to our argument before validation), accepted as a label with nothing to do (a command's
 * `description`), or refused with what to do instead. Anything else is refused by the strict
 * schema (define.ts words that refusal). The JSON schema the model is shown keeps one spelling
 * per field: zod's preprocess is transparent to the schema LangChain sends.
 */
export type AliasTable = Readonly<Record<string, readonly string[]>>;

type Args = Record<string, unknown>;

export interface PeerArguments {
  /** Our argument → the names other agents give it. */
  renames?: AliasTable;
  /** Shapes that are more than a rename (a line range as start and end); runs before the renames. */
  convert?: (args: Args) => Args;
  /** Names that label a call for people (a command's description): accepted, nothing to do. */
  labels?: readonly string[];
  /** Names this tool cannot honour, with what to do instead (the refusal says it). */
  unsupported?: Readonly<Record<string, string>>;
  /** An array field whose elements have their own peer names (edit_file's `edits`). */
  nested?: { field: string; aliases?: readonly string[]; peers: PeerArguments };
}

export const FILE_PATH_ALIASES: AliasTable = {
  filePath: ["file_path", "filepath", "absolute_path", "path", "file", "filename"],
};
export const EDIT_ALIASES: AliasTable = {
  oldString: ["old_string", "old_str", "oldText", "old_text"],
  newString: ["new_string", "new_str", "newText", "new_text"],
  replaceAll: ["replace_all", "allow_multiple"],
};

function isRecord(value: unknown): value is Args {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A copy of `value` with aliased keys renamed; the canonical name wins when both are given. */
export function renameAliases(value: unknown, table: AliasTable): unknown {
  if (!isRecord(value)) return value;
  const out: Args = { ...value };
  for (const [canonical, aliases] of Object.entries(table)) {
    for (const alias of aliases) {
      if (!(alias in out)) continue;
      if (out[canonical] === undefined) out[canonical] = out[alias];
      delete out[alias];
    }
  }
  return out;
}

/** `args` with our names for other agents' arguments; what it cannot map is left for validation to refuse. */
export function applyPeerArguments(value: unknown, peers: PeerArguments): unknown {
  if (!isRecord(value)) return value;
  let out: Args = peers.convert ? peers.convert({ ...value }) : { ...value };
  for (const label of peers.labels ?? []) {
    if (typeof out[label] === "string") delete out[label];
  }
  const { nested } = peers;
  out = renameAliases(
    out,
    nested ? { ...peers.renames, [nested.field]: nested.aliases ?? [] } : (peers.renames ?? {}),
  ) as Args;
  if (nested && Array.isArray(out[nested.field])) {
    out[nested.field] = (out[nested.field] as unknown[]).map((e) => applyPeerArguments(e, nested.peers));
  }
  return out;
}

/** Why a peer argument is refused, by schema; define.ts reads it to word the refusal. */
const UNSUPPORTED = new WeakMap<z.ZodType, PeerArguments>();

/** `schema`, accepting other agents' names for its arguments as `peers` describes. */
export function withPeerArguments<T extends z.ZodTypeAny>(schema: T, peers: PeerArguments) {
  const wrapped = z.preprocess((value) => applyPeerArguments(value, peers), schema);
  UNSUPPORTED.set(wrapped, peers);
  return wrapped;
}

/** What to do instead of a peer argument `key` the tool cannot honour (at `path`, e.g. ["edits", 0]). */
export function unsupportedReason(schema: z.ZodType, path: readonly PropertyKey[], key: string): string | undefined {
  let peers = UNSUPPORTED.get(schema);
  if (peers && path.length > 0) peers = path[0] === peers.nested?.field ? peers.nested.peers : undefined;
  return peers?.unsupported?.[key];
}

/** Moves `from` to `to` when `to` is not set; deletes `from` either way. */
function move(args: Args, from: string, to: string, map: (v: unknown) => unknown = (v) => v): void {
  if (!(from in args)) return;
  if (args[to] === undefined) args[to] = map(args[from]);
  delete args[from];
}

/** Drops `key` when its value is `value` (what the tool does anyway); otherwise it stays and is refused. */
function dropWhen(args: Args, key: string, value: unknown): void {
  if (args[key] === value) delete args[key];
}

const SHELLS = new Set(["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh"]);

/** Codex sends a command as argv (`["bash", "-lc", "npm test"]`); we run a bash string. */
function commandString(value: unknown): unknown {
  if (!Array.isArray(value) || !value.every((w) => typeof w === "string")) return value;
  const words = value as string[];
  if (words.length === 3 && SHELLS.has(words[0]!) && /^-l?c$/.test(words[1]!)) return words[2];
  return words.map(shellQuote).join(" ");
}

export const EXECUTE_COMMAND_PEERS: PeerArguments = {
  renames: {
    workingDirectory: ["workdir", "cwd", "dir_path", "directory", "working_directory", "working_dir", "workingDir"],
    timeoutMs: ["timeout_ms", "timeout"],
  },
  convert: (args) => {
    move(args, "cmd", "command");
    if (Array.isArray(args.command)) args.command = commandString(args.command);
    dropWhen(args, "run_in_background", false);
    dropWhen(args, "is_background", false);
    return args;
  },
  labels: ["description", "justification"],
  unsupported: {
    run_in_background:
      "there is no background flag: a dev server goes to the background by itself when it prints its URL or says it is ready; other commands run to the end (set timeoutMs for long ones)",
    is_background:
      "there is no background flag: a dev server goes to the background by itself when it prints its URL or says it is ready; other commands run to the end (set timeoutMs for long ones)",
    with_escalated_permissions:
      "there is no escalation: the approval mode and the sandbox decide what a command may do",
    sandbox_permissions: "there is no escalation: the approval mode and the sandbox decide what a command may do",
  },
};

export const READ_FILE_PEERS: PeerArguments = {
  renames: FILE_PATH_ALIASES,
  convert: (args) => {
    // Gemini CLI: a 1-based inclusive range.
    const start = typeof args.start_line === "number" ? args.start_line : undefined;
    const end = typeof args.end_line === "number" ? args.end_line : undefined;
    if (start !== undefined || end !== undefined) {
      if (args.offset === undefined) args.offset = start ?? 1;
      if (end !== undefined && args.limit === undefined) args.limit = end - (start ?? 1) + 1;
      delete args.start_line;
      delete args.end_line;
    }
    dropWhen(args, "mode", "slice");
    return args;
  },
};

export const WRITE_FILE_PEERS: PeerArguments = {
  renames: { ...FILE_PATH_ALIASES, content: ["contents", "text"] },
};

export const EDIT_FILE_PEERS: PeerArguments = {
  renames: { ...FILE_PATH_ALIASES, ...EDIT_ALIASES },
  convert: (args) => {
    // Gemini CLI: how many matches are expected; more than one means all of them.
    const expected = args.expected_replacements;
    if (typeof expected === "number" && Number.isInteger(expected) && expected >= 1) {
      if (expected > 1 && args.replaceAll === undefined && args.replace_all === undefined) args.replaceAll = true;
      delete args.expected_replacements;
    }
    // opencode's multiedit repeats the file in every edit: fine when it is this file.
    const file = args.filePath ?? args.file_path;
    if (Array.isArray(args.edits)) {
      args.edits = args.edits.map((e: unknown) => {
        if (!isRecord(e)) return e;
        const copy = { ...e };
        for (const key of ["filePath", "file_path"]) if (key in copy && copy[key] === file) delete copy[key];
        return copy;
      });
    }
    return args;
  },
  labels: ["instruction"],
  nested: { field: "edits", peers: { renames: EDIT_ALIASES } },
};

export const LIST_DIRECTORY_PEERS: PeerArguments = {
  renames: { directoryPath: ["directory_path", "dir_path", "path", "directory", "dir"] },
  unsupported: {
    ignore: "list_directory has no ignore list: use find_files with a pattern to pick files",
    depth: 'list_directory lists one level: list a subdirectory, or use find_files (e.g. "src/**") to see deeper',
    offset:
      "list_directory shows up to its limit and says how many entries there are: list a subdirectory to see fewer",
    limit: "list_directory shows up to its limit and says how many entries there are: list a subdirectory to see fewer",
  },
};

export const FIND_FILES_PEERS: PeerArguments = {
  renames: { path: ["dir_path", "directory", "dir", "cwd"] },
  convert: (args) => {
    dropWhen(args, "case_sensitive", true);
    dropWhen(args, "respect_git_ignore", true);
    return args;
  },
  unsupported: {
    case_sensitive: 'find_files patterns are always case-sensitive: use a character class such as "*.[jJ][sS]"',
    respect_git_ignore:
      'find_files skips ignored files unless you name an ignored folder as path (e.g. "node_modules/x")',
  },
};

/** ripgrep's --type names models send (Claude Code's Grep `type`), as globs. */
const FILE_TYPES: Readonly<Record<string, string>> = {
  js: "*.{js,mjs,cjs,jsx}",
  ts: "*.{ts,mts,cts,tsx}",
  py: "*.{py,pyi}",
  go: "*.go",
  rust: "*.rs",
  java: "*.java",
  c: "*.{c,h}",
  cpp: "*.{cpp,cc,cxx,hpp,hh,hxx,h}",
  cs: "*.cs",
  rb: "*.rb",
  php: "*.php",
  swift: "*.swift",
  kotlin: "*.{kt,kts}",
  json: "*.json",
  yaml: "*.{yaml,yml}",
  toml: "*.toml",
  md: "*.{md,markdown}",
  markdown: "*.{md,markdown}",
  html: "*.{html,htm}",
  css: "*.{css,scss,sass,less}",
  sh: "*.{sh,bash,zsh}",
  sql: "*.sql",
};

export const SEARCH_FILES_PEERS: PeerArguments = {
  renames: {
    path: ["dir_path", "directory", "dir"],
    glob: ["include", "include_pattern", "file_pattern"],
    caseSensitive: ["case_sensitive"],
    contextLines: ["context_lines", "context", "-C"],
  },
  convert: (args) => {
    // Claude Code: -i means case-insensitive (our default).
    if (typeof args["-i"] === "boolean") move(args, "-i", "caseSensitive", (v) => !v);
    // One-sided context (-A/-B, after/before) is shown as context on both sides.
    const sides = ["-A", "-B", "after", "before"].filter((k) => typeof args[k] === "number");
    if (sides.length > 0) {
      if (args.contextLines === undefined && args.context === undefined && args["-C"] === undefined)
        args.contextLines = Math.max(...sides.map((k) => args[k] as number));
      for (const k of sides) delete args[k];
    }
    if (typeof args.type === "string" && FILE_TYPES[args.type] && args.glob === undefined) {
      args.glob = FILE_TYPES[args.type];
      delete args.type;
    }
    // Gemini CLI: the pattern is a literal string.
    if (args.fixed_strings === true && typeof args.pattern === "string") {
      args.pattern = escapeRegExp(args.pattern);
      delete args.fixed_strings;
    }
    dropWhen(args, "fixed_strings", false);
    dropWhen(args, "-n", true);
    dropWhen(args, "multiline", false);
    dropWhen(args, "output_mode", "content");
    return args;
  },
  unsupported: {
    type: `unknown file type: use glob instead, e.g. "*.ts" (known types: ${Object.keys(FILE_TYPES).join(", ")})`,
    "-n": "line numbers are always shown",
    multiline: "search_files matches one line at a time: search for one line of the text",
    output_mode:
      'search_files always shows matching lines as "path:line: text", which names the files too: leave output_mode out',
    names_only:
      'search_files always shows matching lines as "path:line: text", which names the files too: leave names_only out',
    head_limit:
      "search_files shows at most 100 matches and says how many there were: narrow the search with path or glob",
    limit: "search_files shows at most 100 matches and says how many there were: narrow the search with path or glob",
    total_max_matches:
      "search_files shows at most 100 matches and says how many there were: narrow the search with path or glob",
    exclude_pattern: "there is no exclusion: narrow the search with path or glob",
  },
};

export const APPLY_PATCH_PEERS: PeerArguments = { renames: { input: ["patch", "diff"] } };

const PROCESS_ID_ALIASES: AliasTable = { id: ["bash_id", "shell_id", "process_id"] };
export const PROCESS_OUTPUT_PEERS: PeerArguments = { renames: { ...PROCESS_ID_ALIASES, tail: ["lines"] } };
export const STOP_PROCESS_PEERS: PeerArguments = { renames: PROCESS_ID_ALIASES };

const TODO_ITEM_PEERS: PeerArguments = {
  renames: { content: ["description", "step", "task", "title"] },
  labels: ["id", "priority"],
};

export const WRITE_TODOS_PEERS: PeerArguments = {
  labels: ["explanation"],
  nested: { field: "todos", aliases: ["plan"], peers: TODO_ITEM_PEERS },
};

/** Peer names by built-in tool, so the engines can give every later step (approval, trace) our names. */
const BY_TOOL: Readonly<Record<string, PeerArguments>> = {
  read_file: READ_FILE_PEERS,
  write_file: WRITE_FILE_PEERS,
  edit_file: EDIT_FILE_PEERS,
  apply_patch: APPLY_PATCH_PEERS,
  list_directory: LIST_DIRECTORY_PEERS,
  find_files: FIND_FILES_PEERS,
  search_files: SEARCH_FILES_PEERS,
  execute_command: EXECUTE_COMMAND_PEERS,
  process_output: PROCESS_OUTPUT_PEERS,
  stop_process: STOP_PROCESS_PEERS,
  write_todos: WRITE_TODOS_PEERS,
};

/**
 * A built-in tool call's arguments under our names (`{cmd, workdir}` → `{command,
 * workingDirectory}`), so the approval check judges what will run. Other tools' are unchanged.
 */
export function canonicalArguments(toolName: string, args: Args): Args {
  const peers = Object.hasOwn(BY_TOOL, toolName) ? BY_TOOL[toolName] : undefined;
  return peers ? (applyPeerArguments(args, peers) as Args) : args;
}
