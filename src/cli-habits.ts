/**
 * Flags people bring from Claude Code, Codex CLI and Gemini CLI (issue 44 item 6): an unknown
 * one of these gets mini-cursor's equivalent named, instead of a bare "unknown option". A table,
 * so a habit is one row: the spellings, the tools that use it, and what to use here, given the
 * value that followed the flag when it takes one.
 */

interface Habit {
  flags: readonly string[];
  from: string;
  /** Whether the flag takes a value (`--output-format json`), for the hint to use it. */
  takesValue?: boolean;
  instead(value: string | undefined): string;
}

/** Claude Code's permission modes, Gemini CLI's approval modes and Codex's approval policies, as ours. */
const MODES: Record<string, string> = {
  default: "suggest",
  acceptedits: "auto-edit",
  auto_edit: "auto-edit",
  plan: "plan",
  bypasspermissions: "full-auto",
  yolo: "full-auto",
  untrusted: "suggest",
  "on-request": "auto-edit",
  "on-failure": "full-auto",
  never: "full-auto",
};
const approvalFor = (value: string | undefined) =>
  `--approval ${(value && MODES[value.toLowerCase()]) || "suggest|auto-edit|full-auto|plan"}`;

const HABITS: readonly Habit[] = [
  {
    flags: ["-p", "--print", "--prompt", "-q", "--quiet"],
    from: "Claude Code, Gemini CLI and Codex (their one-shot modes)",
    instead: () =>
      'a task given as an argument already runs once, prints the trace and the answer, and exits: mini-cursor "<task>" (--json for JSON Lines events; text piped in is added to the task).',
  },
  {
    flags: ["--output-format", "-o"],
    from: "Claude Code and Gemini CLI",
    takesValue: true,
    instead: (value) =>
      value === "text"
        ? "text is the default output: leave the flag out."
        : "--json prints one JSON object per event (JSON Lines) on stdout; the last one, run_end, has the outcome and the usage.",
  },
  {
    flags: ["-r", "--resume"],
    from: "Claude Code and Codex",
    takesValue: true,
    instead: (value) =>
      value && !value.startsWith("-")
        ? `--thread ${value} "<task>" goes on with that thread (--threads lists them).`
        : '--continue "<task>" goes on with the latest thread here, --thread <id> "<task>" with another (--threads lists them; with no task, a session opens on it).',
  },
  {
    flags: [
      "--dangerously-skip-permissions",
      "--dangerously-bypass-approvals-and-sandbox",
      "--yolo",
      "-y",
      "--full-auto",
    ],
    from: "Claude Code, Codex and Gemini CLI",
    instead: () =>
      "--approval full-auto runs every command without asking, except dangerous ones; --sandbox off runs them outside bubblewrap.",
  },
  {
    flags: ["--permission-mode", "--approval-mode", "-a", "--ask-for-approval"],
    from: "Claude Code, Gemini CLI and Codex",
    takesValue: true,
    instead: (value) => `${approvalFor(value)} (suggest asks before writes and commands, auto-edit before commands).`,
  },
  {
    flags: ["-C", "--cd", "--cwd"],
    from: "Codex",
    takesValue: true,
    instead: (value) => `--workspace ${value ?? "<dir>"}, the folder every tool works in.`,
  },
  {
    flags: ["--add-dir", "--include-directories"],
    from: "Claude Code and Gemini CLI",
    takesValue: true,
    instead: () =>
      "a run works in one folder, its workspace: pass --workspace <dir> with a folder that holds all you need.",
  },
  {
    flags: ["--session-id"],
    from: "Claude Code",
    takesValue: true,
    instead: (value) =>
      `--thread ${value ?? "<id>"} "<task>" runs on the thread of that id (a new one if there is none).`,
  },
  {
    flags: ["--max-turns"],
    from: "Claude Code",
    takesValue: true,
    instead: (value) => `--max-steps ${value ?? "<n>"}, the model turns per task.`,
  },
  {
    flags: ["-d", "--debug"],
    from: "Claude Code and Gemini CLI",
    instead: () => "--verbose shows stack traces for errors (also DEBUG=1).",
  },
  {
    flags: ["-i", "--prompt-interactive"],
    from: "Gemini CLI",
    takesValue: true,
    instead: () =>
      "with no task, mini-cursor opens a session on a terminal; type the first request at its prompt (--continue opens it on the latest thread).",
  },
  {
    flags: ["--system-prompt", "--append-system-prompt"],
    from: "Claude Code",
    takesValue: true,
    instead: () =>
      "put standing instructions in AGENTS.md in the workspace; the system prompt includes it (docs/configuration.md, project instructions).",
  },
  {
    flags: ["--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools"],
    from: "Claude Code",
    takesValue: true,
    instead: () =>
      "project rules allow, ask or deny commands (docs/safety.md); --approval sets what runs without asking.",
  },
];

/**
 * The hint for an unknown flag that another agent's CLI has, naming ours; undefined for any other.
 * `argv` is what was typed, to find the value that followed the flag.
 */
export function habitHint(flag: string, argv: readonly string[]): string | undefined {
  const [name, inline] = flag.startsWith("--") && flag.includes("=") ? flag.split(/=(.*)/s, 2) : [flag, undefined];
  const habit = HABITS.find((h) => h.flags.includes(name!));
  if (!habit) return undefined;
  const at = argv.indexOf(flag);
  const next = at >= 0 ? argv[at + 1] : undefined;
  const value = inline ?? (habit.takesValue && next !== undefined && !next.startsWith("-") ? next : undefined);
  return `${name} is from ${habit.from}. In mini-cursor: ${habit.instead(value)}`;
}
