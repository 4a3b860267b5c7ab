/**
 * The wrapper table of the command classifier: each program that runs another command (sudo,
 * env, timeout, xargs, nice, flock, uv run, …), with how to find the command it runs and what
 * running it that way means. A new wrapper is a row here (see docs/ARCHITECTURE.md, "Where to
 * add"); classify-unwrap.ts follows the table through the classification's State, which
 * classify.ts hands it, so the two files do not import each other.
 */

import type { State } from "./classify-state.js";
import { opaque } from "./classify-state.js";
import {
  checkProgramVariable,
  checkTarget,
  joinWords,
  optionValue,
  positional,
  replacementOf,
  runScript,
  skipOptions,
  type Unwrapped,
  type Unwrapper,
} from "./classify-unwrap.js";
import type { Word } from "./shell-parse.js";

const skipAssignments = (args: Word[], from: number, state?: State) => {
  let i = from;
  while (i < args.length && !args[i]!.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!.value)) {
    const [name] = args[i]!.value.split("=", 1);
    if (state) {
      state.assigned.add(name!);
      checkProgramVariable(name!, { ...args[i]!, value: args[i]!.value.slice(name!.length + 1) }, state, 0);
    }
    i++;
  }
  return i;
};

/** What a row of the table says about its wrapper besides the options that take a value. */
interface Row {
  /** What running a command this way means: the call asks in every mode. */
  danger?: string;
  /** The options that name the folder the command runs in. */
  cwd?: readonly string[];
  /** Words between the options and the command (timeout's duration, taskset's CPU mask). */
  skip?: number;
  /** An option that makes the wrapper act on a running process instead of starting a command. */
  pid?: (option: Word) => boolean;
}

/** A wrapper that runs the words after its options (`valued` options take a value), as its row says. */
const afterOptions =
  (valued: readonly string[], row: Row = {}): Unwrapper =>
  (args) => {
    const i = skipOptions(args, valued);
    const options = args.slice(0, i);
    if (row.pid && options.some(row.pid)) return { words: [] };
    return {
      words: args.slice(i + (row.skip ?? 0)),
      ...(row.danger ? { danger: row.danger } : {}),
      ...(row.cwd ? { cwd: optionValue(options, row.cwd) } : {}),
    };
  };

/**
 * A package runner's subcommand (`uv run CMD`, `bundle exec CMD`): the command after it, after
 * the subcommand's options when `valued` lists them; any other subcommand is the tool's own.
 */
const subcommand =
  (names: readonly string[], valued?: readonly string[]): Unwrapper =>
  (args) => {
    if (!names.includes(args[0]?.value ?? "")) return undefined;
    const rest = args.slice(1);
    return { words: valued ? rest.slice(skipOptions(rest, valued)) : rest };
  };

/** taskset -p, chrt -p (bundled short flags included): the process named, not a command. */
const pidFlag = (a: Word) => /^-[a-z]*p/.test(a.value) || a.value === "--pid";

/** `npx` / `npm exec`: the command after the options (and `--`), or the `-c` script. */
function npmExec(args: Word[], state: State, depth: number): Unwrapped {
  const i = skipOptions(args, ["-p", "--package", "-c", "--call", "-w", "--workspace"]);
  const script = optionValue(args.slice(0, i), ["-c", "--call"]);
  if (script) return { words: [], delegated: runScript(script, "npx -c", state, depth) };
  return { words: args.slice(i) };
}

/** strace / ltrace: the traced command, and the log file `-o` writes. */
function traced(args: Word[], state: State, valued: readonly string[]): Unwrapped {
  const i = skipOptions(args, valued);
  const options = args.slice(0, i);
  const log = optionValue(options, ["-o", "--output"]);
  if (log) checkTarget(log, "the trace log writes to", state);
  if (options.some((a) => a.value === "-p" || a.value.startsWith("--attach"))) return { words: [] };
  return { words: args.slice(i) };
}

const STDIN_WORDS: Word = { value: "<stdin>", dynamic: true, raw: "(arguments from stdin)", kind: "xargs" };

const ADMIN = "runs it with administrator rights";

export const WRAPPERS: Record<string, Unwrapper> = {
  sudo: (args, state) => {
    const options = skipOptions(args, [
      "-u",
      "-g",
      "-C",
      "-D",
      "-h",
      "-p",
      "-r",
      "-t",
      "-T",
      "-U",
      "--user",
      "--group",
      "--chdir",
      "--host",
      "--prompt",
      "--role",
      "--type",
      "--command-timeout",
      "--other-user",
      "--close-from",
    ]);
    const i = skipAssignments(args, options, state);
    return {
      words: args.slice(i),
      danger: `sudo ${ADMIN}`,
      cwd: optionValue(args.slice(0, options), ["-D", "--chdir"]),
    };
  },
  doas: afterOptions(["-u", "-C"], { danger: `doas ${ADMIN}` }),
  run0: afterOptions(
    ["-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--nice", "--property", "--unit", "--slice"],
    { danger: `run0 ${ADMIN}` },
  ),
  runuser: (args, state, depth) => {
    const c = args.findIndex((a) => a.value === "-c" || a.value === "--command");
    if (c !== -1)
      return {
        words: [],
        danger: "runuser runs it as another user",
        delegated: args[c + 1] !== undefined && runScript(args[c + 1]!, "runuser -c", state, depth),
      };
    return {
      words: args.slice(
        skipOptions(args, [
          "-u",
          "--user",
          "-g",
          "--group",
          "-G",
          "--supp-group",
          "-s",
          "--shell",
          "-w",
          "--whitelist-environment",
        ]),
      ),
      danger: "runuser runs it as another user",
    };
  },
  chroot: (args) => {
    const rest = args.slice(skipOptions(args, ["--userspec", "--groups"]));
    return { words: rest.slice(1), danger: `chroot ${ADMIN} in another root` };
  },
  nsenter: afterOptions(["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root", "-W"], {
    cwd: ["-w", "--wd"],
  }),
  unshare: afterOptions(
    [
      "-S",
      "--setuid",
      "-G",
      "--setgid",
      "--propagation",
      "-R",
      "--root",
      "-w",
      "--wd",
      "--map-user",
      "--map-group",
      "--map-users",
      "--map-groups",
      "--load-interp",
    ],
    { cwd: ["-w", "--wd"] },
  ),
  flock: (args, state, depth) => {
    const i = skipOptions(args, ["-w", "--timeout", "-E", "--conflict-exit-code"]);
    const rest = args.slice(i + 1); // after the lock file (or descriptor)
    const c = rest.findIndex((a) => a.value === "-c" || a.value === "--command");
    if (c !== -1)
      return { words: [], delegated: rest[c + 1] !== undefined && runScript(rest[c + 1]!, "flock -c", state, depth) };
    return { words: rest[0]?.value === "--" ? rest.slice(1) : rest };
  },
  // After the CPU mask or list.
  taskset: afterOptions([], { skip: 1, pid: pidFlag }),
  // After the priority.
  chrt: afterOptions(["-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"], {
    skip: 1,
    pid: pidFlag,
  }),
  setpriv: afterOptions([
    "--ruid",
    "--euid",
    "--reuid",
    "--rgid",
    "--egid",
    "--regid",
    "--groups",
    "--inh-caps",
    "--ambient-caps",
    "--bounding-set",
    "--securebits",
    "--pdeathsig",
    "--selinux-label",
    "--apparmor-profile",
    "--landlock-access",
    "--landlock-rule",
    "--seccomp-filter",
  ]),
  prlimit: afterOptions(["-p", "--pid", "-o", "--output"], {
    pid: (a) => a.value === "-p" || a.value.startsWith("--pid"),
  }),
  strace: (args, state) =>
    traced(args, state, [
      "-e",
      "-o",
      "-p",
      "-s",
      "-u",
      "-a",
      "-b",
      "-E",
      "-I",
      "-O",
      "-P",
      "-S",
      "-X",
      "-U",
      "--output",
      "--attach",
      "--user",
      "--env",
      "--string-limit",
    ]),
  ltrace: (args, state) =>
    traced(args, state, [
      "-e",
      "-o",
      "-p",
      "-s",
      "-u",
      "-a",
      "-A",
      "-D",
      "-F",
      "-L",
      "-l",
      "-n",
      "-x",
      "--output",
      "--library",
    ]),
  script: (args, state, depth) => {
    // `-qc CMD`: short flags bundled with -c last, which takes the next word.
    args = args.map((a) => (/^-[a-zA-Z]+c$/.test(a.value) && !a.dynamic ? { ...a, value: "-c" } : a));
    const valued = [
      "-c",
      "--command",
      "-E",
      "--echo",
      "-I",
      "--log-in",
      "-O",
      "--log-out",
      "-B",
      "--log-io",
      "-T",
      "--log-timing",
      "-m",
      "--logging-format",
    ];
    const options = args.slice(0, skipOptions(args, valued));
    for (const log of [
      positional(args, valued)[0],
      optionValue(options, ["-O", "--log-out", "-B", "--log-io", "-I", "--log-in", "-T", "--log-timing"]),
    ]) {
      if (log) checkTarget(log, "script writes its log to", state);
    }
    const command = optionValue(options, ["-c", "--command"]);
    if (!command) {
      opaque(state, "script without -c starts a shell that reads commands from its input");
      return { words: [], delegated: true };
    }
    return { words: [], delegated: runScript(command, "script -c", state, depth) };
  },
  parallel: (args, state, depth) => {
    const i = skipOptions(args, [
      "-j",
      "--jobs",
      "-S",
      "--sshlogin",
      "-a",
      "--arg-file",
      "-d",
      "--delimiter",
      "-I",
      "-n",
      "--max-args",
      "-N",
      "-L",
      "--max-lines",
      "--joblog",
      "--results",
      "--tmpdir",
      "--workdir",
      "--wd",
      "-E",
      "--colsep",
      "-C",
      "--env",
      "--timeout",
      "--delay",
      "--retries",
      "--tag-string",
      "--basefile",
      "--return",
      "--transfer-file",
      "--sshloginfile",
      "--load",
      "--memfree",
    ]);
    const rest = args.slice(i);
    const separator = (w: Word) => /^:{3,4}\+?$/.test(w.value);
    const at = rest.findIndex(separator);
    const template = at === -1 ? rest : rest.slice(0, at);
    const inputs = at === -1 ? [] : rest.slice(at + 1).filter((w) => !separator(w));
    if (template.length === 0) {
      opaque(state, "parallel runs commands read from its input");
      return { words: [], delegated: true };
    }
    // Without `:::` the arguments come from stdin, as with xargs.
    if (inputs.length === 0) return { words: [...template, STDIN_WORDS] };
    for (const input of inputs) {
      const filled = template.some((w) => w.value.includes("{}"))
        ? template.map((w) => ({
            ...w,
            value: w.value.split("{}").join(input.value),
            dynamic: w.dynamic || input.dynamic,
          }))
        : [...template, input];
      runScript(joinWords(filled), "parallel", state, depth);
    }
    return { words: [], delegated: true };
  },
  "systemd-run": afterOptions(
    [
      "-p",
      "--property",
      "-E",
      "--setenv",
      "-u",
      "--unit",
      "--slice",
      "--description",
      "--working-directory",
      "-M",
      "--machine",
      "-H",
      "--host",
      "--uid",
      "--gid",
      "--nice",
      "--on-calendar",
      "--on-active",
      "--timer-property",
      "--path-property",
      "--socket-property",
    ],
    { cwd: ["--working-directory"] },
  ),
  firejail: afterOptions([]),
  cgexec: afterOptions(["-g"]),
  numactl: afterOptions([
    "-N",
    "-C",
    "-m",
    "-i",
    "-p",
    "-P",
    "--cpunodebind",
    "--physcpubind",
    "--membind",
    "--interleave",
    "--preferred",
  ]),
  // After the time it fakes.
  faketime: afterOptions(["-m", "-f", "-p"], { skip: 1 }),
  fakeroot: afterOptions(["-l", "--lib", "--faked", "-s", "-i"]),
  eatmydata: afterOptions([]),
  catchsegv: afterOptions([]),
  rlwrap: afterOptions([
    "-a",
    "-b",
    "-C",
    "-D",
    "-e",
    "-f",
    "-F",
    "-H",
    "-l",
    "-O",
    "-p",
    "-P",
    "-q",
    "-s",
    "-S",
    "-t",
    "-w",
    "-z",
  ]),
  proxychains: afterOptions(["-f"]),
  proxychains4: afterOptions(["-f"]),
  torsocks: afterOptions(["-u", "-p", "-a", "-P"]),
  "dbus-run-session": afterOptions(["--config-file", "--dbus-daemon"]),
  "xvfb-run": afterOptions([
    "-n",
    "--server-num",
    "-s",
    "--server-args",
    "-f",
    "--auth-file",
    "-e",
    "--error-file",
    "-p",
    "--xauth-protocol",
    "-w",
    "--wait",
  ]),
  valgrind: afterOptions([]),
  caffeinate: afterOptions(["-t", "-w"]),
  toybox: (args) => ({ words: args }),
  direnv: (args) => (args[0]?.value === "exec" ? { words: args.slice(2) } : undefined),
  pkexec: afterOptions(["--user"], { danger: `pkexec ${ADMIN}` }),
  su: (args, state, depth) => {
    const c = args.findIndex((a) => a.value === "-c" || a.value === "--command");
    const delegated = c !== -1 && args[c + 1] !== undefined && runScript(args[c + 1]!, "su -c", state, depth);
    return { words: [], danger: "su runs it as another user", delegated };
  },
  env: (args, state) => {
    let i = 0;
    let cwd: Word | undefined;
    const split: Word[] = [];
    while (i < args.length) {
      const a = args[i]!;
      if (a.dynamic || !a.value.startsWith("-") || a.value === "-") break;
      if (a.value === "--") {
        i++;
        break;
      }
      if (
        a.value === "-S" ||
        a.value === "--split-string" ||
        a.value.startsWith("--split-string=") ||
        /^-S./.test(a.value)
      ) {
        const body =
          a.value === "-S" || a.value === "--split-string"
            ? args[++i]
            : { ...a, value: a.value.replace(/^(-S|--split-string=)/, "") };
        if (body?.dynamic) opaque(state, "env -S splits a command only known at run time");
        else if (body)
          split.push(
            ...body.value
              .split(/\s+/)
              .filter(Boolean)
              .map((value) => ({ value, dynamic: false, raw: value, kind: "word" })),
          );
        i++;
        continue;
      }
      if (a.value === "-C" || a.value === "--chdir") cwd = args[i + 1];
      else if (/^-C./.test(a.value) || a.value.startsWith("--chdir="))
        cwd = { ...a, value: a.value.replace(/^(-C|--chdir=)/, "") };
      i += ["-u", "--unset", "-C", "--chdir"].includes(a.value) ? 2 : 1;
    }
    const words = [...split, ...args.slice(skipAssignments(args, i, state))];
    // `env` alone prints the environment: a program of its own, not a wrapper.
    return words.length === 0 && !cwd ? undefined : { words, cwd };
  },
  command: (args) => {
    if (args.some((a, i) => i < 2 && (a.value === "-v" || a.value === "-V"))) return { words: [] };
    return { words: args.slice(skipOptions(args, [])) };
  },
  builtin: (args) => ({ words: args }),
  exec: afterOptions(["-a"]),
  nice: (args) => ({ words: args.slice(skipOptions(args, ["-n", "--adjustment"], true)) }),
  ionice: (args) =>
    args.some((a) => a.value === "-p")
      ? { words: [] }
      : { words: args.slice(skipOptions(args, ["-c", "-n", "--class", "--classdata"])) },
  nohup: afterOptions([]),
  setsid: afterOptions([]),
  stdbuf: afterOptions(["-i", "-o", "-e", "--input", "--output", "--error"]),
  unbuffer: afterOptions([]),
  // After the duration.
  timeout: afterOptions(["-s", "-k", "--signal", "--kill-after"], { skip: 1 }),
  time: afterOptions(["-f", "-o", "--format", "--output"]),
  busybox: afterOptions([]),
  // Package runners: `uv run CMD`, `poetry run CMD`, `bundle exec CMD`, `pnpm exec CMD`...
  uv: subcommand(
    ["run"],
    ["--with", "--python", "-p", "--directory", "--project", "--env-file", "--package", "--extra", "--group"],
  ),
  poetry: subcommand(["run"], []),
  pipenv: subcommand(["run"]),
  bundle: subcommand(["exec"]),
  pnpm: subcommand(["exec", "dlx"], ["--package"]),
  yarn: subcommand(["exec", "dlx"], ["-p", "--package"]),
  // `npx rimraf ~` runs the package's command with those arguments; `npx -c '…'` runs a script.
  npx: (args, state, depth) => npmExec(args, state, depth),
  bunx: afterOptions(["-p", "--package"]),
  npm: (args, state, depth) =>
    ["exec", "x"].includes(args[0]?.value ?? "") ? npmExec(args.slice(1), state, depth) : undefined,
  xargs: (args) => {
    const i = skipOptions(args, [
      "-a",
      "-d",
      "-E",
      "-I",
      "-L",
      "-n",
      "-P",
      "-s",
      "--arg-file",
      "--delimiter",
      "--eof",
      "--max-lines",
      "--max-args",
      "--max-procs",
      "--max-chars",
      "--process-slot-var",
    ]);
    // -I R (or -i, --replace): R in the command is replaced by what stdin holds.
    const replace = replacementOf(args.slice(0, i));
    const inner = args
      .slice(i)
      .map((w) =>
        replace && w.value.includes(replace)
          ? { ...w, value: w.value.split(replace).join("$XARGS"), dynamic: true }
          : w,
      );
    return { words: inner.length > 0 ? [...inner, STDIN_WORDS] : [] };
  },
  watch: (args, state, depth) => {
    const i = skipOptions(args, ["-n", "--interval", "-q", "--equexit"]);
    const rest = args.slice(i);
    if (args.slice(0, i).some((a) => a.value === "-x" || a.value === "--exec")) return { words: rest };
    if (rest.length > 0) runScript(joinWords(rest), "watch", state, depth);
    return { words: [], delegated: true };
  },
};

/** Names whose redefinition as a function changes what later commands in the line mean. */
