import path from "node:path";
import {
  type CommandMatcher,
  type CommandRow,
  COMMANDS,
  DESTRUCTIVE,
  FIND_NAME_TESTS,
  GIT,
  GIT_BANNED,
  GIT_GLOBAL_BANNED,
  GIT_GLOBAL_VALUED,
  GIT_PROGRAM_KEYS,
  LISTS_PATHS_UNDER,
  NAME_PATTERNS,
  STOPS_MACHINE,
  VERSION_ONLY,
  WRAPPERS,
  type WrapperRow,
  type WriteSpec,
} from "./classify-tables.js";
import {
  type Effect,
  type Unwrapped,
  type Where,
  basename,
  fill,
  hasFlag,
  holds,
  joinWords,
  list,
  optionValue,
  optionValues,
  positional,
  shorten,
  skipOptions,
  word,
} from "./classify-state.js";
import { kindAt } from "./files.js";
import { locateAll } from "./locations.js";
import type { StdinSource, Word } from "./shell-parse.js";

/**
 * The tables read: what a wrapper runs, what a command does (as effects the engine judges), and
 * whether it is read-only. Each row's fields are read here the same way for every program; the
 * named matchers below hold the logic a row cannot say (find -exec, git's configuration, tar).
 */

/** A table whose keys may name several programs (`"sh bash"`), by single name. */
function byName<T>(table: Readonly<Record<string, T>>): ReadonlyMap<string, T> {
  return new Map(Object.entries(table).flatMap(([names, row]) => names.split(" ").map((n) => [n, row] as const)));
}

const COMMAND_ROWS = byName(COMMANDS);
const WRAPPER_ROWS = byName(WRAPPERS);
const GIT_ROWS = byName(GIT);

/** The row of a program by name or by pattern (`mkfs.ext4` is `mkfs`). */
export function commandRow(name: string): CommandRow | undefined {
  const row = COMMAND_ROWS.get(name);
  if (row) return row;
  for (const [pattern, to] of NAME_PATTERNS) if (pattern.test(name)) return COMMAND_ROWS.get(name.replace(pattern, to));
  return undefined;
}

export const isWrapper = (name: string) => WRAPPER_ROWS.has(name);
/** A wrapper that runs its command without changing what it may do (`timeout 5 ls` stays read-only). */
export const keepsReadOnly = (name: string) => WRAPPER_ROWS.get(name)?.readOnly === true;

// ---------------------------------------------------------------------------------------------
// Wrappers

/** What the wrapper `name` runs, or undefined when it is not one (or, as used, runs nothing else). */
export function unwrap(name: string, args: Word[]): Unwrapped | undefined {
  const row = WRAPPER_ROWS.get(name);
  if (!row) return undefined;
  if (row.match) return WRAPPER_MATCHERS[row.match](args, row);
  return byRow(name, row, args);
}

/** Whether an option is one of `names`: a short one alone or bundled (`-cp`), a long one with any value. */
const isOneOf = (option: Word, names: readonly string[]) =>
  names.some((n) => (n.startsWith("--") ? option.value.startsWith(n) : hasFlag([option], n.slice(1)) !== undefined));

function byRow(name: string, row: WrapperRow, args: Word[]): Unwrapped | undefined {
  let words = args;
  if (row.via) {
    if (!list(row.via).includes(args[0]?.value ?? "")) return undefined;
    words = args.slice(1);
  }
  const scripts = list(row.script);
  const i = skipOptions(words, [...list(row.valued), ...scripts]);
  const options = words.slice(0, i);
  const effects: Effect[] = [];
  const log = optionValue(options, list(row.logs));
  if (log) effects.push({ write: log, verb: `${name} writes its log to` });
  if (options.some((o) => isOneOf(o, list(row.noCommand)))) return { words: [], effects };
  const start = row.assignments ? assignments(words, i, effects) : i;
  const danger: Effect[] = row.danger ? [{ danger: row.danger }] : [];
  const script = optionValue(row.scriptAnywhere ? words : options, scripts);
  if (script)
    return {
      words: [],
      delegated: !script.dynamic,
      effects: [...effects, { script, what: `${name} ${scripts[0]}` }, ...danger],
    };
  if (row.onlyScript) return { words: [], effects: [...effects, ...danger] };
  let rest = words.slice(start + (row.skip ?? 0));
  if (rest[0]?.value === "--" && !rest[0].dynamic) rest = rest.slice(1);
  const cwd = optionValue(options, list(row.cwd));
  return { words: rest, effects: [...effects, ...danger], ...(cwd ? { cwd } : {}) };
}

/** `NAME=value` words from `from` (`env A=1 cmd`): each an assignment. Returns the index after them. */
function assignments(args: Word[], from: number, effects: Effect[]): number {
  let i = from;
  while (i < args.length && !args[i]!.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!.value)) {
    const [name] = args[i]!.value.split("=", 1);
    effects.push({ assign: name!, value: { ...args[i]!, value: args[i]!.value.slice(name!.length + 1) } });
    i++;
  }
  return i;
}

/** What xargs and parallel append: the arguments they read from stdin. */
const STDIN_WORDS: Word = { value: "<stdin>", dynamic: true, raw: "(arguments from stdin)", kind: "xargs" };

const WRAPPER_MATCHERS: Record<
  NonNullable<WrapperRow["match"]>,
  (args: Word[], row: WrapperRow) => Unwrapped | undefined
> = {
  env(args) {
    let i = 0;
    let cwd: Word | undefined;
    const split: Word[] = [];
    const effects: Effect[] = [];
    while (i < args.length) {
      const a = args[i]!;
      if (a.dynamic || !a.value.startsWith("-") || a.value === "-") break;
      if (a.value === "--") {
        i++;
        break;
      }
      if (/^(-S|--split-string)(=|$)|^-S./.test(a.value)) {
        const body = /^(-S|--split-string)$/.test(a.value)
          ? args[++i]
          : { ...a, value: a.value.replace(/^(-S|--split-string=)/, "") };
        if (body?.dynamic) effects.push({ opaque: "env -S splits a command only known at run time" });
        else if (body) split.push(...body.value.split(/\s+/).filter(Boolean).map(word));
        i++;
        continue;
      }
      if (a.value === "-C" || a.value === "--chdir") cwd = args[i + 1];
      else if (/^-C./.test(a.value) || a.value.startsWith("--chdir="))
        cwd = { ...a, value: a.value.replace(/^(-C|--chdir=)/, "") };
      i += ["-u", "--unset", "-C", "--chdir"].includes(a.value) ? 2 : 1;
    }
    // `env` alone prints the environment: no words, so it is the command itself.
    const words = [...split, ...args.slice(assignments(args, i, effects))];
    return { words, effects, ...(cwd ? { cwd } : {}) };
  },
  script(args, row) {
    // `-qc CMD`: short flags bundled with -c last, which takes the next word.
    args = args.map((a) => (/^-[a-zA-Z]+c$/.test(a.value) && !a.dynamic ? { ...a, value: "-c" } : a));
    const valued = [...list(row.valued), ...list(row.script)];
    const options = args.slice(0, skipOptions(args, valued));
    const effects: Effect[] = [];
    for (const log of [positional(args, valued)[0], optionValue(options, list(row.logs))])
      if (log) effects.push({ write: log, verb: "script writes its log to" });
    const command = optionValue(options, list(row.script));
    if (!command) {
      effects.push({ opaque: "script without -c starts a shell that reads commands from its input" });
      return { words: [], delegated: true, effects };
    }
    return { words: [], delegated: !command.dynamic, effects: [...effects, { script: command, what: "script -c" }] };
  },
  parallel(args, row) {
    const rest = args.slice(skipOptions(args, list(row.valued)));
    const separator = (w: Word) => /^:{3,4}\+?$/.test(w.value);
    const at = rest.findIndex(separator);
    const template = at === -1 ? rest : rest.slice(0, at);
    const inputs = at === -1 ? [] : rest.slice(at + 1).filter((w) => !separator(w));
    if (template.length === 0)
      return { words: [], delegated: true, effects: [{ opaque: "parallel runs commands read from its input" }] };
    // Without `:::` the arguments come from stdin, as with xargs.
    if (inputs.length === 0) return { words: [...template, STDIN_WORDS], effects: [] };
    const effects: Effect[] = inputs.map((input) => {
      const filled = template.some((w) => w.value.includes("{}"))
        ? template.map((w) => ({
            ...w,
            value: w.value.split("{}").join(input.value),
            dynamic: w.dynamic || input.dynamic,
          }))
        : [...template, input];
      return { script: joinWords(filled), what: "parallel" };
    });
    return { words: [], delegated: true, effects };
  },
  xargs(args, row) {
    const i = skipOptions(args, list(row.valued));
    // -I R (or -i, --replace): R in the command is replaced by what stdin holds.
    const replace = replacementOf(args.slice(0, i));
    // A word holding it is whatever stdin holds (`../` included): as unknown as a stdin argument,
    // unless it starts at the home folder or the root, which says where it lies (`~/{}`).
    const inner = args
      .slice(i)
      .map((w) =>
        !replace || !w.value.includes(replace)
          ? w
          : /^[~/]/.test(w.value) && !w.value.startsWith(replace)
            ? { ...w, value: w.value.split(replace).join("$XARGS"), dynamic: true }
            : { ...STDIN_WORDS, raw: w.raw },
      );
    // With a replacement string, what stdin holds goes where it stands, not after the command.
    return { words: inner.length > 0 ? (replace ? inner : [...inner, STDIN_WORDS]) : [], effects: [] };
  },
  watch(args, row) {
    const i = skipOptions(args, list(row.valued));
    const rest = args.slice(i);
    if (args.slice(0, i).some((a) => a.value === "-x" || a.value === "--exec")) return { words: rest, effects: [] };
    return { words: [], delegated: true, effects: rest.length > 0 ? [{ script: joinWords(rest), what: "watch" }] : [] };
  },
};

/** The replacement string of xargs options (`-I R`, `-iR`, `-i`, `--replace[=R]`). */
function replacementOf(options: Word[]): string | undefined {
  for (let j = 0; j < options.length; j++) {
    const v = options[j]!.value;
    if (v === "-I") return options[j + 1]?.value;
    if (v.startsWith("-I")) return v.slice(2);
    if (v === "-i" || v === "--replace") return "{}";
    if (v.startsWith("-i")) return v.slice(2);
    if (v.startsWith("--replace=")) return v.slice("--replace=".length);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Commands

/** What the command does, by its row and its matcher (`label` names it in reasons: `git difftool`). */
export function commandEffects(name: string, row: CommandRow, args: Word[], ctx: MatchContext, label = name): Effect[] {
  const out: Effect[] = [];
  const writes: readonly WriteSpec[] = row.writes === undefined ? [] : "verb" in row.writes ? [row.writes] : row.writes;
  for (const spec of writes) out.push(...writeEffects({ ...spec, verb: fill(spec.verb, name, args) }, args, ctx));
  const found = row.if === undefined ? true : holds(row.if, args);
  if (found && row.danger) out.push({ danger: fill(row.danger, name, args, found) });
  if (found && row.opaque) out.push({ opaque: fill(row.opaque, name, args, found) });
  const scripts = list(row.scripts);
  const script = optionValue(args, scripts);
  if (script) out.push({ script, what: `${label} ${scripts[0]}` });
  if (row.network) out.push({ network: true });
  if (row.match) out.push(...COMMAND_MATCHERS[row.match](args, { ...ctx, name }));
  return out;
}

interface MatchContext {
  at: Where;
  stdin: StdinSource | undefined;
  /** The command's source text. */
  text: string;
  name?: string;
  /** git's `-c` settings (for `git clean`). */
  config?: Map<string, string>;
}

function writeEffects(spec: WriteSpec, args: Word[], ctx: MatchContext): Effect[] {
  const targets: Word[] = [];
  if (spec.operands !== undefined) {
    const operands = positional(args, list(spec.valued));
    targets.push(...(spec.operands === true ? operands : operands.slice(spec.operands, spec.operands + 1)));
  }
  const named = optionValues(args, list(spec.option));
  targets.push(...named);
  if (spec.otherwise && named.length === 0) targets.push(word(spec.otherwise));
  if (spec.prefix) {
    for (const a of args.filter((w) => w.value.startsWith(spec.prefix!)))
      targets.push({ ...a, value: a.value.slice(spec.prefix.length), raw: a.raw.slice(spec.prefix.length) });
  }
  const recursive = spec.recursive === true || (spec.recursive !== undefined && Boolean(holds(spec.recursive, args)));
  if (!spec.deletes)
    return targets.map((t) => ({
      write: t,
      verb: spec.verb,
      how: { unknownAsks: spec.unknownAsks, tempIsOutside: spec.tempIsOutside },
    }));
  return targets.flatMap((target): Effect[] => {
    if (target.kind === "xargs") return xargsDeletes(spec.verb, ctx, recursive);
    // A variable or substitution the line could not read may name anything (`rm -f "$(echo ~/.x)"`).
    const computed = /[$`]/.test(target.raw);
    return [{ write: target, verb: spec.verb, how: deleting(recursive || computed, recursive) }];
  });
}

const deleting = (unknownAsks: boolean, wholeWorkspaceAsks: boolean) => ({
  unknownAsks,
  wholeWorkspaceAsks,
  tempIsOutside: true,
});

const inWorkspace = (w: Word, at: Where) => locateAll(w, at).some((l) => l.kind === "workspace");

/** `… | xargs rm`: the paths stdin holds, when the line says what they are; asks when it does not. */
function xargsDeletes(verb: string, ctx: MatchContext, recursive: boolean): Effect[] {
  const known = xargsTargets(ctx.stdin);
  if (!known) return [{ danger: `${verb} paths read from stdin, which may lie outside the workspace` }];
  return known.targets.map((t): Effect => {
    if (known.whole && inWorkspace(t, ctx.at))
      return { danger: `${verb} every file of the whole workspace (the paths come from stdin)` };
    return { write: t, verb, how: deleting(true, recursive) };
  });
}

/**
 * What `xargs` hands a destructive command, as far as the line tells: the words `echo`/`printf`
 * print, the folders `find` walks (everything in them when no name test narrows it), the cwd
 * for `ls`/`git ls-files`/`grep -l`; undefined when it cannot be known (`cat list | xargs rm`).
 */
function xargsTargets(stdin: StdinSource | undefined): { targets: Word[]; whole: boolean } | undefined {
  if (stdin?.kind === "text") {
    if (stdin.dynamic) return undefined;
    return { targets: stdin.text.split(/\s+/).filter(Boolean).map(word), whole: false };
  }
  if (stdin?.kind !== "pipe" || stdin.from.length !== 1) return undefined;
  const [cmd, ...args] = stdin.from[0]!.words;
  if (!cmd || cmd.dynamic || args.some((a) => a.dynamic)) return undefined;
  const name = basename(cmd);
  if (name === "echo" || name === "printf") {
    const printed = (name === "printf" ? args.slice(1) : args.filter((a) => !/^-[neE]+$/.test(a.value)))
      .flatMap((a) => a.value.split(/\s+/))
      .filter(Boolean);
    return { targets: printed.map(word), whole: false };
  }
  if (!list(LISTS_PATHS_UNDER).includes(name)) return undefined;
  if (name === "git" && !["ls-files", "diff", "grep"].includes(args[0]?.value ?? "")) return undefined;
  const firstTest = args.findIndex((a) => /^[-(!]/.test(a.value));
  const roots = name === "find" ? args.slice(0, firstTest === -1 ? args.length : firstTest) : [];
  const dirs = roots.length > 0 ? roots : name === "ls" ? positional(args) : [];
  const filtered = name !== "find" || args.some((a) => list(FIND_NAME_TESTS).includes(a.value));
  // A narrowed find names some files under its folders; anything else, everything in them.
  const under = (dirs.length > 0 ? dirs : [word(".")]).map((d) => ({
    ...d,
    value: `${d.value.replace(/\/+$/, "")}/${name === "find" && filtered ? "{}" : "*"}`,
  }));
  return { targets: under, whole: (name === "find" && !filtered) || name === "ls" };
}

type Matcher = (args: Word[], ctx: MatchContext & { name: string }) => Effect[];

const RULES_REASON = "may create or replace the project's command rules";
const COPY_VALUED = list("-t --target-directory -S --suffix -m --mode -o --owner -g --group");
const TARGET_DIRECTORY = list("-t --target-directory");

const COMMAND_MATCHERS: Record<CommandMatcher, Matcher> = {
  find(args, { at, text }) {
    const out: Effect[] = [];
    let i = 0;
    const roots: Word[] = [];
    while (i < args.length && !(args[i]!.value.startsWith("-") || ["(", "!", ")"].includes(args[i]!.value)))
      roots.push(args[i++]!);
    if (roots.length === 0) roots.push(word("."));
    const under = (root: Word): Word => ({
      ...root,
      value: `${root.value.replace(/\/+$/, "")}/{}`,
      raw: `${root.raw.replace(/\/+$/, "")}/{}`,
    });
    // Without a name test, `find . -delete` (or `-exec rm {} +`) reaches every file of the workspace.
    const filtered = args.some((w) => list(FIND_NAME_TESTS).includes(w.value));
    for (; i < args.length; i++) {
      const a = args[i]!.value;
      if (a === "-delete") {
        for (const root of roots) {
          if (!filtered && inWorkspace(root, at))
            out.push({ danger: `find ${root.raw} -delete deletes the whole workspace` });
          else
            out.push({
              write: under(root),
              verb: "find -delete deletes files under",
              how: { unknownAsks: true, tempIsOutside: true },
            });
        }
      } else if (["-exec", "-execdir", "-ok", "-okdir"].includes(a)) {
        const end = args.findIndex((w, j) => j > i && (w.value === ";" || w.value === "+"));
        const inner = args.slice(i + 1, end === -1 ? args.length : end);
        const program = basename(inner.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.value)));
        if (!filtered && list(DESTRUCTIVE).includes(program) && inner.some((w) => w.value.includes("{}"))) {
          for (const root of roots.filter((r) => inWorkspace(r, at)))
            out.push({
              danger: `find ${root.raw} ${a} ${program} deletes or changes every file of the whole workspace`,
            });
        }
        for (const root of roots) {
          const found = under(root);
          const words = inner.map((w) =>
            w.value.includes("{}")
              ? {
                  ...w,
                  value: w.value.split("{}").join(found.value),
                  raw: w.raw.split("{}").join(found.raw),
                  dynamic: w.dynamic || found.dynamic,
                }
              : w,
          );
          if (words.length > 0) out.push({ run: words, text });
        }
        i = end === -1 ? args.length : end;
      } else if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(a) && args[i + 1]) {
        out.push({ write: args[i + 1]!, verb: `find ${a} writes to` });
      }
    }
    return out;
  },

  git(args, ctx) {
    const out: Effect[] = [];
    const i = skipOptions(args, list(GIT_GLOBAL_VALUED));
    const globals = args.slice(0, i);
    const config = new Map<string, string>();
    globals.forEach((a, j) => {
      let pair: string | undefined;
      if (a.value === "-c") pair = globals[j + 1]?.value;
      else if (a.value.startsWith("--config-env"))
        pair = (a.value.includes("=") ? a.value.split(/=(.*)/s)[1] : globals[j + 1]?.value) ?? "";
      if (pair === undefined) return;
      const [key, value = "true"] = pair.split(/=(.*)/s);
      config.set(key!.toLowerCase(), value);
      if (GIT_PROGRAM_KEYS.test(key!)) out.push({ danger: `\`git -c ${shorten(pair, 50)}\` makes git run a program` });
    });
    if (globals.some((a) => a.value.startsWith("--exec-path") && a.value.includes("=")))
      out.push({ opaque: "git --exec-path runs git's commands from another folder" });
    const sub = args[i]?.value;
    const rest = args.slice(i + 1);
    for (const a of rest) {
      if (/^--(upload-pack|receive-pack|exec)(=|$)/.test(a.value))
        out.push({ opaque: `git ${sub ?? ""} ${a.value.split("=")[0]} runs a program` });
      if (/^--(ext-diff|textconv)$/.test(a.value))
        out.push({ opaque: `git ${sub ?? ""} ${a.value} runs programs set in git's configuration` });
      if (/^ext::/.test(a.value)) out.push({ opaque: "an ext:: remote runs a program" });
    }
    for (const target of optionValues(rest, ["--output"])) out.push({ write: target, verb: "git writes to" });
    const row = GIT_ROWS.get(sub ?? "");
    return row ? [...out, ...commandEffects(sub!, row, rest, { ...ctx, config }, `git ${sub}`)] : out;
  },

  clean(rest, { config }) {
    const requireForce = (config?.get("clean.requireforce") ?? "true").toLowerCase();
    const forced = holds(["-f", "--force~3"], rest) || ["false", "no", "off", "0"].includes(requireForce);
    return forced && !holds(["-n", "--dry-run~3"], rest) ? [{ danger: "git clean -f deletes untracked files" }] : [];
  },

  pushRefspec(rest) {
    const refspec = positional(rest)
      .slice(1)
      .some((a) => a.value.startsWith("+") || a.value.startsWith(":"));
    return refspec && !holds(GIT_ROWS.get("push")!.if!, rest)
      ? [{ danger: "git push with a +refspec or :refspec rewrites or deletes history on the remote" }]
      : [];
  },

  /**
   * `git checkout <rev> <paths>` (no `--`) overwrites those paths with the revision's copy, like
   * `git checkout -- <paths>`: two or more operands (after the options and their values), or one
   * that is an existing file, are paths.
   */
  checkoutPaths(rest, { at }) {
    const operands = positional(rest, ["-b", "-B", "--orphan", "--conflict"]);
    const only = operands[0];
    const paths =
      rest.some((a) => a.value.startsWith("--pathspec-from-file")) ||
      operands.length >= 2 ||
      (only !== undefined &&
        !only.dynamic &&
        at.here.some((dir) => dir !== null && kindAt(path.resolve(dir, only.value)) === "file"));
    return paths ? [{ danger: "git checkout of paths (or -f) discards uncommitted changes" }] : [];
  },

  config(rest) {
    const out: Effect[] = [];
    const words = positional(rest, ["-f", "--file", "--blob", "--type", "--default", "--comment"]);
    const key = ["set", "unset", "get", "list", "edit"].includes(words[0]?.value ?? "") ? words[1] : words[0];
    const writes =
      words.length >= 2 ||
      Boolean(holds(["=--unset", "=--unset-all", "=--add", "=--replace-all", "=--edit", "=-e"], rest)) ||
      words[0]?.value === "set";
    if (!writes) return out;
    if (key && GIT_PROGRAM_KEYS.test(key.value))
      out.push({ danger: `git config ${key.value} makes git run a program` });
    if (holds(["=--global", "=--system"], rest))
      out.push({ danger: "git config --global changes settings outside the workspace" });
    const file = optionValue(rest, ["-f", "--file"]);
    if (file) out.push({ write: file, verb: "git config writes to" });
    return out;
  },

  foreach: (rest) =>
    rest[0]?.value === "foreach"
      ? [{ script: joinWords(positional(rest.slice(1))), what: "git submodule foreach" }]
      : [],

  bisect: (rest) =>
    rest[0]?.value === "run" && rest.length > 1
      ? [{ run: rest.slice(1), text: `git bisect ${rest.map((a) => a.value).join(" ")}` }]
      : [],

  /** GNU tar: options that run programs, and extraction or archives outside the workspace. */
  tar(args) {
    const out: Effect[] = [];
    const first = args[0]?.value ?? "";
    // `tar xzf a.tgz` (an old-style bundle without a dash) or `tar -xzf a.tgz`.
    const bundles = args
      .filter((a, i) => (i === 0 && /^[A-Za-z]+$/.test(first)) || /^-[A-Za-z]+$/.test(a.value))
      .map((a) => a.value.replace(/^-/, ""));
    const values = args.map((a) => a.value);
    const extracting = bundles.some((b) => b.includes("x")) || values.some((v) => /^--(extract|get)$/.test(v));
    const creating = bundles.some((b) => /[cru]/.test(b)) || values.some((v) => /^--(create|append|update)$/.test(v));
    const runner = values.find(
      (v) =>
        /^--(to-command|checkpoint-action|use-compress-program|rsh-command|info-script|new-volume-script)(=|$)/.test(
          v,
        ) ||
        v === "-I" ||
        v === "-F",
    );
    if (runner) out.push({ opaque: `tar ${runner.split("=")[0]} runs a program` });
    if (
      extracting &&
      (values.includes("-P") || values.includes("--absolute-names") || bundles.some((b) => b.includes("P")))
    )
      out.push({ danger: "tar -P extracts to absolute paths, anywhere on the machine" });
    // Into the current folder unless -C names another.
    if (extracting)
      out.push({ write: optionValue(args, ["-C", "--directory"]) ?? word("."), verb: "tar extracts into" });
    if (creating) {
      const file =
        optionValue(args, ["-f", "--file"]) ??
        (bundles[0]?.endsWith("f")
          ? args[args.findIndex((a) => a.value.replace(/^-/, "") === bundles[0]) + 1]
          : undefined);
      if (file && file.value !== "-") out.push({ write: file, verb: "tar writes the archive to" });
    }
    return out;
  },

  sed: (args) => [...inPlace("sed", args), ...sedScript(args)],
  perlInPlace: (args) => inPlace("perl", args),

  /** awk programs that run commands (`system()`, pipes) or write files (`print > "f"`). */
  awk(args) {
    if (args.some((a) => a.value === "-f" || a.value.startsWith("--file"))) return [{ notReadOnly: "awk -f" }];
    const program = positional(args, ["-F", "-v", "--assign", "--field-separator"])[0];
    if (!program) return [];
    if (program.dynamic)
      return [{ opaque: `awk runs a program only known at run time (\`${shorten(program.raw, 60)}\`)` }];
    if (/\bsystem\s*\(|\|\s*(getline\b|&)|"\s*\|\s*getline|\|\s*"|print[f]?[^;{}]*>/.test(program.value))
      return [{ opaque: "the awk program runs commands or writes files" }];
    return [];
  },

  /** ssh, scp, sftp: `-o ProxyCommand=…` and friends run a local command. */
  ssh(args, { name }) {
    const out: Effect[] = [];
    args.forEach((a, i) => {
      let option: string | undefined;
      if (a.value === "-o") option = args[i + 1]?.value;
      else if (a.value.startsWith("-o")) option = a.value.slice(2);
      else if (name === "scp" && a.value === "-S") out.push({ opaque: "scp -S runs another program in place of ssh" });
      else if (a.value === "-F" && args[i + 1])
        out.push({ opaque: `${name} -F reads a config file that can run commands` });
      if (!option) return;
      const m =
        /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand|PermitLocalCommand|Include|Match)\s*[= ]\s*(.*)$/is.exec(
          option,
        );
      if (!m) return;
      const key = m[1]!.toLowerCase();
      if (key === "proxycommand" || key === "localcommand" || key === "knownhostscommand") {
        const dynamic = a.dynamic || Boolean(args[i + 1]?.dynamic && a.value === "-o");
        out.push({ script: { ...a, value: m[2]!, dynamic }, what: `${name} -o ${m[1]}` });
      } else if (key === "include" || key === "match") out.push({ opaque: `${name} -o ${m[1]} can run commands` });
    });
    return out;
  },

  /**
   * Downloads that name their file after the URL (`curl -O`, `wget URL`) or let the server name it
   * (`curl -J`, `wget --content-disposition`, `-r`, `-i`): the name can be a rules file without
   * being spelt in the command (`wget https://x/mini-cursor.config%2Ejson`).
   */
  downloads(args, { name, at }) {
    const curl = name === "curl";
    const dir = optionValue(args, curl ? ["--output-dir"] : ["-P", "--directory-prefix"]) ?? word(".");
    const serverNamed = curl
      ? holds(["-J", "--remote-header-name"], args)
      : holds(list("-r -m -i --recursive --mirror --content-disposition --trust-server-names --input-file"), args);
    const urlNamed = curl
      ? holds(["-O", "--remote-name", "--remote-name-all"], args)
      : !holds(["=-O", "--output-document"], args);
    const into: Effect = { write: dir, verb: `${name} saves files into` };
    if (serverNamed)
      return rulesCanLandIn(dir, at)
        ? [{ danger: `${name} ${RULES_REASON}: the server names the files it saves in ${dir.raw}` }]
        : [into];
    if (!urlNamed) return [];
    const out: Effect[] = [];
    for (const url of args.filter(
      (w) => /^[a-z][a-z0-9+.-]*:\/\//i.test(w.value) || (w.dynamic && !w.value.startsWith("-")),
    )) {
      const last =
        url.value
          .replace(/[?#].*$/s, "")
          .split("/")
          .pop() ?? "";
      if ((url.dynamic && /[$`]|[<>]\(/.test(last)) || /[[{]/.test(last)) {
        out.push(
          rulesCanLandIn(dir, at)
            ? {
                danger: `${name} ${RULES_REASON}: it saves \`${shorten(url.raw, 50)}\` under a name only known at run time`,
              }
            : into,
        );
        continue;
      }
      let decoded = last;
      try {
        decoded = decodeURIComponent(last);
      } catch {
        // Not valid percent-encoding: the name is saved as written.
      }
      for (const file of new Set([last, decoded])) {
        if (file === "" || file.includes("/")) continue;
        const created: Word = { ...dir, value: `${dir.value.replace(/\/+$/, "")}/${file}`, dynamic: false };
        out.push(
          isRulesFile(created, at)
            ? { danger: `${name} ${RULES_REASON}: it saves ${shorten(url.raw, 50)} as ${created.value}` }
            : { write: { ...created, raw: created.value }, verb: `${name} saves` },
        );
      }
    }
    return out;
  },

  /** cp, install, ln: the destination (a `-t` folder, or the last of two or more operands). */
  copy(args, ctx) {
    const out: Effect[] = optionValues(args, TARGET_DIRECTORY).map((t) => ({
      write: t,
      verb: `${ctx.name} writes into`,
    }));
    const files = positional(args, COPY_VALUED);
    const dest = files[files.length - 1];
    if (out.length === 0 && files.length > 1 && dest) out.push({ write: dest, verb: `${ctx.name} writes to` });
    return [...out, ...(ctx.name === "ln" ? [{ link: args }] : COMMAND_MATCHERS.createdNames(args, ctx))];
  },

  /**
   * `cp`/`mv`/`install` into a folder create `folder/<source's name>`: that may be a rules file
   * even when no word spells its name (`cp /tmp/p/mini-cursor.config.js''on .`), and sources of
   * unknown names (`cp -r /tmp/p/. .`, `mv stage/* .`) may bring one into the workspace root.
   */
  createdNames(args, { name, at }) {
    const files = positional(args, COPY_VALUED);
    const dir = optionValue(args, TARGET_DIRECTORY);
    const dest = dir ?? (files.length > 1 ? files[files.length - 1] : undefined);
    const sources = dir ? files : files.slice(0, -1);
    if (!dest || sources.length === 0) return [];
    const noTarget = hasFlag(args, "T", ["--no-target-directory"]);
    const contentsUnknown = (w: Word) => w.dynamic || /[*?[]/.test(path.basename(w.value)) || /\/\.?$/.test(w.value);
    return sources.flatMap((source): Effect[] => {
      if ((contentsUnknown(source) || noTarget) && rulesCanLandIn(dest, at))
        return [
          {
            danger: `${name} ${shorten(source.raw, 40)} into ${dest.raw} ${RULES_REASON} (files it cannot name land there)`,
          },
        ];
      const created: Word = { ...dest, value: `${dest.value.replace(/\/+$/, "")}/${path.basename(source.value)}` };
      return isRulesFile(created, at)
        ? [{ danger: `${name} ${shorten(source.raw, 40)} into ${dest.raw} ${RULES_REASON} (${created.value})` }]
        : [];
    });
  },

  rsync(args) {
    const files = positional(args, ["-e", "--rsh", "--exclude", "--include", "--filter", "-f"]).filter(
      (w) => !/^[^/~]*:/.test(w.value),
    );
    const dest = files[files.length - 1];
    return files.length > 1 && dest ? [{ write: dest, verb: "rsync writes to" }] : [];
  },

  /** chmod, chown, chgrp: the files after the mode (or owner), recursive ones too. */
  permissions(args, { name }) {
    const recursive = hasFlag(args, "R", ["--recursive"]) !== undefined;
    const words = positional(args, ["--reference"]);
    const targets = args.some((a) => a.value.startsWith("--reference")) ? words : words.slice(1);
    return targets.map((t) => ({
      write: t,
      verb: `${name}${recursive ? " -R" : ""} changes`,
      how: { unknownAsks: recursive },
    }));
  },

  kill(args) {
    const dashDash = args.findIndex((a) => a.value === "--");
    const targets = dashDash === -1 ? args.slice(1) : args.slice(dashDash + 1);
    return targets.some((t) => t.value === "-1") ? [{ danger: "kill -1 stops every process the user can signal" }] : [];
  },

  systemctl(args) {
    const [sub = "", ...units] = positional(
      args,
      list(
        "-H --host -M --machine -p --property -t --type -s --signal --state -n --lines -o --output --root --job-mode",
      ),
    ).map((w) => w.value);
    const stops = list(STOPS_MACHINE);
    if (stops.includes(sub)) return [{ danger: `systemctl ${sub} stops the machine` }];
    const starts = ["start", "isolate", "restart", "reload-or-restart", "try-restart", "enable", "link"].includes(sub);
    const stopping = (u: string) =>
      stops.includes(u.replace(/\.target$/, "")) || u === "ctrl-alt-del.target" || u === "shutdown.target";
    return starts && units.some(stopping) ? [{ danger: `systemctl ${sub} ${units.join(" ")} stops the machine` }] : [];
  },

  /** `trap 'cmd' EXIT`: the handler runs later, when the shell exits or gets a signal. */
  trap(args) {
    const [handler, ...signals] = positional(args);
    return handler && signals.length > 0 && handler.value !== "-"
      ? [{ script: handler, what: "trap", later: true }]
      : [];
  },
};

/** Whether files of unknown names landing in `dir` could create a rules file (the workspace root or the rules folder). */
const rulesCanLandIn = (dir: Word, at: Where) =>
  locateAll(dir, at).some((l) => l.kind === "workspace" || l.kind === "rules");
const isRulesFile = (w: Word, at: Where) => locateAll(w, at).some((l) => l.kind === "rules");

function inPlace(name: string, args: Word[]): Effect[] {
  if (!args.some((a) => /^-[A-Za-z]*i/.test(a.value) || a.value.startsWith("--in-place"))) return [];
  const hasScriptOption = args.some(
    (a) =>
      ["-e", "-f", "--expression", "--file", "-E"].includes(a.value.split("=")[0]!) || /^-[A-Za-z]*e$/.test(a.value),
  );
  const files = positional(args, ["-e", "-f", "--expression", "--file", "-E", "-l", "-M", "-I"]);
  return (hasScriptOption ? files : files.slice(1)).map((f) => ({ write: f, verb: `${name} -i changes` }));
}

/** The scripts a sed command runs: `-e`/`--expression` values, or its first operand. */
function sedScripts(args: Word[]): Word[] {
  const scripts: Word[] = [];
  args.forEach((a, i) => {
    if (a.value === "-e" || a.value === "--expression") {
      if (args[i + 1]) scripts.push(args[i + 1]!);
    } else if (a.value.startsWith("--expression=")) scripts.push({ ...a, value: a.value.slice(13) });
  });
  if (scripts.length > 0 || args.some((a) => a.value === "-f" || a.value.startsWith("--file"))) return scripts;
  const first = positional(args, ["-l", "--line-length"])[0];
  return first ? [first] : [];
}

/** sed's `w FILE` writes a file and `e` runs a command, even without -i. */
function sedScript(args: Word[]): Effect[] {
  const out: Effect[] = [];
  for (const script of sedScripts(args)) {
    if (
      /(^|[;{}\n]\s*)([0-9,$/!]*\s*)?e(\s|$|;)/.test(script.value) ||
      /(^|[;{}\n\s])s(.).*\2.*\2[gpiImM0-9w]*e/.test(script.value)
    )
      out.push({ opaque: "the sed script runs commands (`e`)" });
    const write = /(?:^|[;{}\n\s])(?:[0-9,$!]*\s*)?[wW]\s+(\S+)|s(.).*\2.*\2[gpiImM0-9e]*w\s*(\S+)/.exec(script.value);
    const target = write?.[1] ?? write?.[3];
    if (target) out.push({ write: { ...script, value: target, raw: target }, verb: "the sed script writes to" });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The read-only list

/** Whether one command (after unwrapping) is on the read-only list with options that keep it so. */
export function isReadOnly(words: readonly Word[]): boolean {
  const [name, ...args] = words;
  if (!name || name.dynamic) return false;
  if (args.length === 1 && list(VERSION_ONLY).includes(args[0]!.value) && !args[0]!.dynamic) return true;
  const spec = commandRow(path.basename(name.value))?.readOnly;
  // Run-time words are arguments only (files, patterns); options must be known to be checked.
  if (!spec || args.some((a) => a.dynamic && a.value.startsWith("-"))) return false;
  return readOnlyBy(spec, args);
}

function readOnlyBy(spec: NonNullable<CommandRow["readOnly"]>, args: readonly Word[]): boolean {
  if (spec === true) return true;
  if (spec === "git") return gitIsReadOnly(args);
  return (
    without(spec.without, args) &&
    (spec.if === undefined || Boolean(holds(spec.if, args, spec.valued))) &&
    (spec.only === undefined || args.every((a) => list(spec.only).includes(a.value)))
  );
}

/** No argument is one of these options (also as `--opt=value` or an abbreviation git would accept). */
function without(banned: string | undefined, args: readonly Word[]): boolean {
  const options = list(banned);
  return args.every(
    ({ value: v }) =>
      !options.some(
        (b) =>
          v === b ||
          v.startsWith(`${b}=`) ||
          (b.startsWith("--") && v.startsWith("--") && v.length > 3 && b.startsWith(v.split("=")[0]!)),
      ),
  );
}

/** git with a subcommand that only reads, and no option that runs a program or writes a file. */
function gitIsReadOnly(args: readonly Word[]): boolean {
  let i = 0;
  while (i < args.length && args[i]!.value.startsWith("-")) {
    const v = args[i]!.value;
    if (list(GIT_GLOBAL_BANNED).some((b) => v === b || v.startsWith(`${b}=`))) return false;
    i += list(GIT_GLOBAL_VALUED).includes(v) ? 2 : 1;
  }
  const sub = args[i]?.value;
  const rest = args.slice(i + 1);
  if (sub === undefined) return args.every((a) => ["--version", "--help", "-h"].includes(a.value));
  const spec = GIT_ROWS.get(sub)?.readOnly;
  return spec !== undefined && without(GIT_BANNED, rest) && readOnlyBy(spec, rest);
}
