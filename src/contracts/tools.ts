/**
 * What a tool declares about itself, as data beside its code (each file in src/tools/ and, from
 * their schemas, MCP tools): what a call does to the world and which of its arguments name
 * workspace paths. Policy (when a call asks, plan mode), the per-path order of a turn's calls and
 * the snapshots read nothing else about a tool: no list of tool names lives anywhere else.
 */

/**
 * What a call does to the world, as Gemini CLI's tool `Kind`:
 * - read: looks and changes nothing (read_file, search_files; write_todos, which only sets the
 *   thread's own list);
 * - edit: changes the workspace files its path arguments name;
 * - execute: runs programs, which may touch anything;
 * - fetch: reaches the network (what it sends may carry the workspace's content);
 * - other: acts only on what this session itself started (stop_process).
 * A tool that declares no kind is treated as the most dangerous: it asks in every mode but
 * full-auto, plan mode refuses it, a snapshot is taken around it, and it runs alone.
 */
export const TOOL_KINDS = ["read", "edit", "execute", "fetch", "other"] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/**
 * How an argument names workspace paths: its value is a path (`path`; absent, the workspace
 * root), the base folder of a glob pattern (`glob`), or the files a V4A patch adds, changes or
 * deletes (`patch`).
 */
export type PathArgument = "path" | "glob" | "patch";

export interface ToolDeclaration {
  kind?: ToolKind;
  /**
   * The arguments that name the workspace paths a call reads (kind read) or changes (kind edit),
   * and how. `{}`: it touches no path. Absent: a call may touch anything (it runs alone, and a
   * file-changing one is snapshotted whole).
   */
  paths?: Readonly<Record<string, PathArgument>>;
  /**
   * A tool that runs a shell command line (kind execute): the argument holding the line, and the
   * one naming the folder it runs in. The command classifier reads what the line does.
   */
  shell?: { command: string; cwd?: string };
}

/** Where a tool carries its declaration: LangChain's tool metadata, which is data. */
const DECLARATION_KEY = "declaration";

/** `tool` with its declaration in its metadata. */
export function declared<T extends object>(tool: T, declaration: ToolDeclaration): T {
  const carrier = tool as { metadata?: Record<string, unknown> };
  carrier.metadata = { ...carrier.metadata, [DECLARATION_KEY]: declaration };
  return tool;
}

/** What a tool declares; nothing (the most dangerous reading) for a tool that declares nothing or is unknown. */
export function declarationOf(tool: object | undefined): ToolDeclaration {
  const metadata = (tool as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  return (metadata?.[DECLARATION_KEY] as ToolDeclaration | undefined) ?? {};
}

/** What the trace and the thread get with a result besides its text; never sent to the model. */
export interface ToolArtifact {
  /** A unified diff of a file change. */
  diff?: string;
  /** A command's exit code when it failed (null: it could not start). */
  exitCode?: number | null;
  /** write_todos: the list as the model wrote it, which becomes the thread's list. */
  todos?: Todo[];
  /** The call was not run: declined, refused by a rule or a hook, or nobody could be asked. */
  notRun?: true;
  /** The person edited the call before it ran: the arguments that ran. */
  editedArgs?: Record<string, unknown>;
}

export const TODO_STATUSES = ["pending", "in_progress", "completed"] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

/** One item of the model's todo list (write_todos). */
export interface Todo {
  content: string;
  status: TodoStatus;
}

/** A JSON object (not an array, not null): what a call's arguments are. */
export function isArgumentsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Marks an error that ends the run instead of becoming the call's result (a failure to save the
 * run's own state: memory/state-errors.ts StateError). The guard (guard.ts) lets it through and
 * turns any other throw into the call's error result.
 */
export const ENDS_RUN = Symbol.for("mini-cursor.endsRun");

export function endsTheRun(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { [ENDS_RUN]?: unknown })[ENDS_RUN] === true;
}
