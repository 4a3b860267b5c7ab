/**
 * The command classifier's rules, as data: the wrappers that run another command, what each
 * program does (what it writes or deletes, when it is dangerous, whether it is read-only), git's
 * subcommands, and the paths that matter (credentials, system folders). One engine reads them
 * (classify-engine.ts, through classify-rows.ts); where a check needs logic, a row names a
 * matcher of classify-rows.ts. A new rule is a row here (docs/ARCHITECTURE.md, "Where to add").
 * This file imports nothing.
 *
 * A row's key may name several programs, separated by spaces; so are lists of options and names.
 *
 * Conditions (`Cond`, on a command's arguments) are a string, a list (any of them holds; a
 * string of several, separated by spaces, is one), `{ all: [...] }` or `{ not: ... }`. A string is:
 *   `-f`         the short option f, alone or bundled (`-fdx`);
 *   `--force`    that option (also `--force=value`), `=x` exactly the argument x (`=.`, `=-S`);
 *   `--hard~4`   an abbreviation of --hard of at least 4 characters, as git accepts (`--ha`);
 *   `@drop`      the first operand is `drop`; `@` there is none; `@-` the first argument is an option;
 *   `#1`         at most one operand (the words that are not options or their values);
 *   `/re/`       an argument matching the regular expression.
 * Texts may say `{name}` (the program), `{1}` (its first argument) and `{arg}` (the argument
 * that made the condition hold).
 */

export type Cond = string | readonly Cond[] | { readonly all: readonly Cond[] } | { readonly not: Cond };

/** Programs that run another command: how to find it, and what running it that way means. */
export interface WrapperRow {
  /** Options that take a value (the next word, or `--opt=value`). */
  valued?: string;
  /** What running a command this way means: the line asks in every mode. */
  danger?: string;
  /** Options naming the folder the command runs in. */
  cwd?: string;
  /** Words between the options and the command (timeout's duration, taskset's CPU mask). */
  skip?: number;
  /** Options with which it starts no command (acts on a process: `taskset -p`, `command -v`). */
  noCommand?: string;
  /** Options whose value is a script it runs (`su -c`); `scriptAnywhere` looks past its operands. */
  script?: string;
  scriptAnywhere?: boolean;
  /** Without its script option it starts no command of its own (`su user` is the command). */
  onlyScript?: boolean;
  /** Options naming a file it writes (`strace -o`). */
  logs?: string;
  /** `NAME=value` words between its options and the command set variables (`sudo A=1 cmd`). */
  assignments?: boolean;
  /** The subcommands that run a command (`uv run`); with another one it is a program of its own. */
  via?: string;
  /** Runs the command without changing what it may do: a read-only line stays read-only. */
  readOnly?: boolean;
  /** The rest needs logic: a wrapper matcher of classify-rows.ts. */
  match?: "env" | "parallel" | "script" | "watch" | "xargs";
}

const ADMIN = "runs it with administrator rights";
const OTHER_USER = "runs it as another user";

export const WRAPPERS: Readonly<Record<string, WrapperRow>> = {
  sudo: {
    valued:
      "-u -g -C -D -h -p -r -t -T -U --user --group --chdir --host --prompt --role --type --command-timeout " +
      "--other-user --close-from",
    danger: `sudo ${ADMIN}`,
    cwd: "-D --chdir",
    assignments: true,
  },
  doas: { valued: "-u -C", danger: `doas ${ADMIN}` },
  run0: {
    valued: "-u --user -g --group -D --chdir --setenv --nice --property --unit --slice",
    danger: `run0 ${ADMIN}`,
  },
  pkexec: { valued: "--user", danger: `pkexec ${ADMIN}` },
  runuser: {
    valued: "-u --user -g --group -G --supp-group -s --shell -w --whitelist-environment",
    danger: `runuser ${OTHER_USER}`,
    script: "-c --command",
    scriptAnywhere: true,
  },
  su: { danger: `su ${OTHER_USER}`, script: "-c --command", scriptAnywhere: true, onlyScript: true },
  chroot: { valued: "--userspec --groups", skip: 1, danger: `chroot ${ADMIN} in another root` },
  nsenter: { valued: "-t --target -S --setuid -G --setgid -w --wd -r --root -W", cwd: "-w --wd" },
  unshare: {
    valued:
      "-S --setuid -G --setgid --propagation -R --root -w --wd --map-user --map-group --map-users --map-groups " +
      "--load-interp",
    cwd: "-w --wd",
  },
  flock: { valued: "-w --timeout -E --conflict-exit-code", skip: 1, script: "-c --command", scriptAnywhere: true },
  taskset: { skip: 1, noCommand: "-p --pid" },
  chrt: { valued: "-T --sched-runtime -P --sched-period -D --sched-deadline", skip: 1, noCommand: "-p --pid" },
  setpriv: {
    valued:
      "--ruid --euid --reuid --rgid --egid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits " +
      "--pdeathsig --selinux-label --apparmor-profile --landlock-access --landlock-rule --seccomp-filter",
  },
  prlimit: { valued: "-p --pid -o --output", noCommand: "-p --pid" },
  strace: {
    valued: "-e -o -p -s -u -a -b -E -I -O -P -S -X -U --output --attach --user --env --string-limit",
    logs: "-o --output",
    noCommand: "-p --attach",
  },
  ltrace: { valued: "-e -o -p -s -u -a -A -D -F -L -l -n -x --output --library", logs: "-o --output", noCommand: "-p" },
  script: {
    valued: "-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m --logging-format",
    script: "-c --command",
    logs: "-O --log-out -B --log-io -I --log-in -T --log-timing",
    match: "script",
  },
  parallel: {
    valued:
      "-j --jobs -S --sshlogin -a --arg-file -d --delimiter -I -n --max-args -N -L --max-lines --joblog --results " +
      "--tmpdir --workdir --wd -E --colsep -C --env --timeout --delay --retries --tag-string --basefile --return " +
      "--transfer-file --sshloginfile --load --memfree",
    match: "parallel",
  },
  "systemd-run": {
    valued:
      "-p --property -E --setenv -u --unit --slice --description --working-directory -M --machine -H --host --uid " +
      "--gid --nice --on-calendar --on-active --timer-property --path-property --socket-property",
    cwd: "--working-directory",
  },
  "firejail eatmydata catchsegv valgrind toybox busybox setsid unbuffer": {},
  "proxychains proxychains4": { valued: "-f" },
  cgexec: { valued: "-g" },
  numactl: { valued: "-N -C -m -i -p -P --cpunodebind --physcpubind --membind --interleave --preferred" },
  faketime: { valued: "-m -f -p", skip: 1 },
  fakeroot: { valued: "-l --lib --faked -s -i" },
  rlwrap: { valued: "-a -b -C -D -e -f -F -H -l -O -p -P -q -s -S -t -w -z" },
  torsocks: { valued: "-u -p -a -P" },
  "dbus-run-session": { valued: "--config-file --dbus-daemon" },
  "xvfb-run": {
    valued: "-n --server-num -s --server-args -f --auth-file -e --error-file -p --xauth-protocol -w --wait",
  },
  caffeinate: { valued: "-t -w" },
  direnv: { via: "exec", skip: 1 },
  env: { match: "env" },
  command: { noCommand: "-v -V", readOnly: true },
  "builtin nohup": { readOnly: true },
  exec: { valued: "-a" },
  nice: { valued: "-n --adjustment", readOnly: true },
  ionice: { valued: "-c -n --class --classdata", noCommand: "-p" },
  stdbuf: { valued: "-i -o -e --input --output --error", readOnly: true },
  timeout: { valued: "-s -k --signal --kill-after", skip: 1, readOnly: true },
  time: { valued: "-f -o --format --output", readOnly: true },
  // Package runners: `uv run CMD`, `bundle exec CMD`, `npx CMD`, `npx -c 'script'`.
  uv: { via: "run", valued: "--with --python -p --directory --project --env-file --package --extra --group" },
  "poetry pipenv": { via: "run" },
  bundle: { via: "exec" },
  pnpm: { via: "exec dlx", valued: "--package" },
  yarn: { via: "exec dlx", valued: "-p --package" },
  npx: { valued: "-p --package -w --workspace", script: "-c --call" },
  npm: { via: "exec x", valued: "-p --package -w --workspace", script: "-c --call" },
  bunx: { valued: "-p --package" },
  xargs: {
    valued:
      "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --max-lines --max-args --max-procs --max-chars " +
      "--process-slot-var",
    readOnly: true,
    match: "xargs",
  },
  watch: { valued: "-n --interval -q --equexit", match: "watch" },
};

/**
 * When a program is read-only: on the list, and (when set) with arguments these allow. A line
 * that writes a file, or where anything was found, is never read-only, whatever the list says.
 */
export interface ReadOnlySpec {
  /** None of these options (also `--opt=value`, or an abbreviation git would accept). */
  without?: string;
  /** And this holds (see "Conditions" above; `#N` counts operands after `valued` options). */
  if?: Cond;
  valued?: string;
  /** Every argument is one of these. */
  only?: string;
}

/** The paths a program writes, changes, moves or deletes. */
export interface WriteSpec {
  /** What the program does to them: "rm deletes", "{name} writes to". */
  verb: string;
  /** Its operands (the words that are not options or their values), or only the n-th. */
  operands?: true | number;
  /** Options that take a value, for finding the operands. */
  valued?: string;
  /** The values of these options. */
  option?: string;
  /** Words starting with this (`of=` of dd), without it. */
  prefix?: string;
  /** The folder it writes into when no option names one (`unzip` extracts into the current one). */
  otherwise?: string;
  /** Deletes: a computed path or a temporary folder asks; when `recursive` holds, so do the workspace itself and any path only known at run time. */
  deletes?: boolean;
  recursive?: Cond | true;
  /** A path only known at run time asks. */
  unknownAsks?: boolean;
  /** Temporary folders count as outside the workspace. */
  tempIsOutside?: boolean;
}

export type CommandMatcher =
  | "awk"
  | "bisect"
  | "checkoutPaths"
  | "clean"
  | "config"
  | "copy"
  | "createdNames"
  | "downloads"
  | "find"
  | "foreach"
  | "git"
  | "kill"
  | "permissions"
  | "perlInPlace"
  | "pushRefspec"
  | "rsync"
  | "sed"
  | "ssh"
  | "systemctl"
  | "tar"
  | "trap";

/** What a program does: each field is read the same way for every program; `match` names the logic no field can say. */
export interface CommandRow {
  /** Dangerous (or, with `opaque`, unreadable) when `if` holds, or whatever its arguments. */
  if?: Cond;
  danger?: string;
  opaque?: string;
  /** The paths it writes or deletes. */
  writes?: WriteSpec | readonly WriteSpec[];
  /** Options whose value is a command line it runs (`rsync -e`, `git difftool -x`). */
  scripts?: string;
  /** On the built-in read-only list (any arguments, or those the spec allows). */
  readOnly?: true | ReadOnlySpec | "git";
  /** Reaches the network (as far as this table knows). */
  network?: boolean;
  /** A shell: reads its script inline (`-c`), from a file or from stdin. */
  shell?: boolean;
  /** An interpreter, with its options that give inline code (`python -c`). */
  code?: string;
  /** Shell built-ins the engine reads itself. */
  builtin?: "cd" | "popd" | "eval" | "source";
  match?: CommandMatcher;
}

/** systemctl verbs and targets that stop the machine. */
export const STOPS_MACHINE =
  "poweroff reboot halt kexec suspend hibernate hybrid-sleep suspend-then-hibernate rescue emergency soft-reboot default";

const DELETES = { verb: "{name} deletes", operands: true, deletes: true, tempIsOutside: true } as const;

/** Programs by name (after any folder: `/bin/rm` is `rm`). */
export const COMMANDS: Readonly<Record<string, CommandRow>> = {
  // Shells, interpreters and the built-ins that run code or move the line.
  "sh bash zsh dash ksh mksh ash yash fish rbash": { shell: true },
  python: { code: "-c -m" },
  "node bun": { code: "-e --eval -p --print" },
  deno: { code: "eval" },
  perl: { code: "-e -E", match: "perlInPlace" },
  "ruby lua Rscript osascript": { code: "-e" },
  php: { code: "-r" },
  pwsh: { code: "-c -Command -command" },
  tclsh: { code: "" },
  eval: { builtin: "eval" },
  "source .": { builtin: "source" },
  cd: { builtin: "cd", readOnly: true },
  pushd: { builtin: "cd" },
  popd: { builtin: "popd" },
  trap: { match: "trap" },
  alias: { if: "/=/", opaque: "defines an alias, so later commands in the line may run something else" },
  shopt: { if: "=expand_aliases", opaque: "turns on aliases, so later commands in the line may run something else" },

  // Disks, the machine, every process.
  "mkfs mke2fs mkswap fdisk sfdisk cfdisk gdisk sgdisk parted wipefs": {
    danger: "{name} formats or repartitions a disk",
  },
  "blkdiscard hdparm mdadm lvremove vgremove pvremove cryptsetup zpool zfs dmsetup badblocks": {
    danger: "{name} changes or erases disks",
  },
  "shutdown reboot halt poweroff": { danger: "{name} stops the machine" },
  systemctl: { match: "systemctl" },
  loginctl: {
    // The verbs systemctl stops the machine with, and those that end a user's session.
    if: `${STOPS_MACHINE.replace(/\S+/g, "@$&")} @terminate-user @kill-user @terminate-session @kill-session`,
    danger: "loginctl {arg} stops the machine or a user's session",
  },
  "init telinit": { if: "@0 @1 @2 @3 @4 @5 @6 @s @S", danger: "{name} {arg} stops the machine or its services" },
  kill: { match: "kill" },
  killall5: { danger: "killall5 stops every process" },
  crontab: { if: "-r", danger: "crontab -r deletes every scheduled job" },

  // Deleting, moving, writing.
  rm: { writes: { ...DELETES, recursive: "-r -R --recursive" } },
  "unlink rmdir shred": { writes: DELETES },
  rimraf: { writes: { ...DELETES, recursive: true } },
  find: { match: "find", readOnly: { without: "-delete -exec -execdir -ok -okdir -fprint -fprint0 -fprintf -fls" } },
  mv: {
    writes: [
      { verb: "mv moves", operands: true, valued: "-t --target-directory -S --suffix", tempIsOutside: true },
      { verb: "mv moves files into", option: "-t --target-directory" },
    ],
    match: "createdNames",
  },
  "cp install ln": { match: "copy" },
  rsync: { scripts: "-e --rsh", match: "rsync", network: true },
  tee: { writes: { verb: "tee writes to", operands: true } },
  truncate: { writes: { verb: "truncate changes", operands: true, valued: "-s --size -r --reference" } },
  touch: { writes: { verb: "touch changes", operands: true, valued: "-r --reference -d --date -t" } },
  mkdir: { writes: { verb: "mkdir makes", operands: true, valued: "-m --mode" } },
  dd: { writes: { verb: "dd writes to", prefix: "of=", unknownAsks: true } },
  "chmod chown chgrp": { match: "permissions" },
  sort: {
    writes: { verb: "sort writes to", option: "-o --output" },
    if: "--compress-program",
    opaque: "sort --compress-program runs a program",
    readOnly: { without: "-o --output --compress-program" },
  },
  uniq: {
    writes: { verb: "uniq writes to", operands: 1, valued: "-f --skip-fields -s --skip-chars -w --check-chars" },
    readOnly: { if: "#1" },
  },
  sed: { match: "sed", readOnly: { if: { not: "-i --in-place -s --separate -f --file" } } },
  tar: { match: "tar" },
  unzip: { writes: { verb: "unzip extracts into", option: "-d", otherwise: "." } },
  "awk gawk mawk nawk": { match: "awk" },

  // Programs that reach the network or run what options name.
  curl: { writes: { verb: "curl writes to", option: "-o --output --output-dir" }, match: "downloads", network: true },
  wget: {
    writes: { verb: "wget writes to", option: "-O --output-document -P --directory-prefix" },
    match: "downloads",
    network: true,
  },
  "ssh scp sftp": { match: "ssh", network: true },
  "nc ncat telnet ftp": { network: true },
  git: { match: "git", readOnly: "git" },
  rg: {
    if: "/^--(pre|hostname-bin)(=|$)/",
    opaque: "rg {arg} runs a program on what it searches",
    readOnly: { without: "--pre --hostname-bin --pre-glob --search-zip -z" },
  },

  // Read-only: no question in any approval mode.
  "ls dir cat tac head tail wc nl grep egrep fgrep ag pwd echo printf true false test [ whoami id uname which type": {
    readOnly: true,
  },
  "stat du df basename dirname realpath readlink cut tr diff cmp comm column jq seq expr printenv": { readOnly: true },
  "sha256sum sha1sum md5sum cksum od hexdump strings ps nproc free uptime": { readOnly: true },
  "fd fdfind": { readOnly: { without: "-x --exec -X --exec-batch" } },
  tree: { readOnly: { without: "-o --output" } },
  date: { readOnly: { without: "-s --set" } },
  hostname: { readOnly: { if: { not: "/^(?!-)/" } } },
  file: { readOnly: { without: "-C --compile" } },
  env: { readOnly: { only: "-0 --null" } },
  xxd: { readOnly: { without: "-r -revert", if: "#1", valued: "-l -len -s -seek -c -cols -g -groupsize -o -offset" } },
};

/** Program names that stand for a row by pattern (`mkfs.ext4`, `python3.12`). */
export const NAME_PATTERNS: readonly (readonly [RegExp, string])[] = [
  [/^mkfs\..+$/, "mkfs"],
  [/^python[\d.]*$|^pypy3?$/, "python"],
  [/^nodejs$/, "node"],
  [/^(perl|ruby|php|lua)[\d.]+$/, "$1"],
];

/** Programs asked only for their version or help (`node --version`, `npm -v`): read-only. */
export const VERSION_ONLY = "--version -v -V version --help -h";

/** git's options before the subcommand that take a value. */
export const GIT_GLOBAL_VALUED = "-C -c --git-dir --work-tree --namespace --exec-path --config-env";
/** git options that make a command not read-only, before the subcommand and after it. */
export const GIT_GLOBAL_BANNED = "-c --config-env --exec-path --upload-pack --receive-pack";
export const GIT_BANNED = "--output --ext-diff --textconv -o --upload-pack --exec --open-files-in-pager -O";

const LOST_WORK = "deletes unreachable commits, the last way to recover lost work";
const OVERWRITES = { if: "-f =--reset =-u", danger: "git {name} overwrites files in the working tree" };
const HISTORY = { danger: "git {name} rewrites the repository's history" };

/** git's subcommands (`{name}` is the subcommand): what each discards or rewrites, and which only read. */
export const GIT: Readonly<Record<string, CommandRow>> = {
  reset: { if: "--hard~4 --merge~4", danger: "git reset --hard discards uncommitted changes" },
  clean: { match: "clean" },
  push: {
    if: "-f -d --force~5 --force-with-lease~9 --force-if-includes~9 --mirror~4 --delete~4 --prune~5",
    danger: "git push --force (or --delete) rewrites or deletes history on the remote",
    match: "pushRefspec",
    network: true,
  },
  checkout: {
    if: "=-- =. =--ours =--theirs -f --force~5 -p --patch~4",
    danger: "git checkout of paths (or -f) discards uncommitted changes",
    match: "checkoutPaths",
  },
  switch: {
    if: "-f --force~5 --discard-changes~4 =-C",
    danger: "git switch --discard-changes discards uncommitted changes",
  },
  restore: {
    if: [{ not: "=--staged =-S --staged~5" }, "=--worktree =-W"],
    danger: "git restore discards uncommitted changes",
  },
  stash: {
    if: ["@drop", "@clear"],
    danger: "git stash {1} deletes saved changes",
    readOnly: { if: ["@list", "@show"] },
  },
  branch: {
    if: ["-D -M -C", { all: ["-d --delete~4", "-f --force~4"] }],
    danger: "git branch -D (or -M) deletes or overwrites a branch that may not be merged",
    readOnly: {
      without:
        "-d -D -m -M -c -C --delete --move --copy -u --set-upstream-to --unset-upstream --edit-description -f " +
        "--force -t --track --no-track --create-reflog",
      if: ["=-l =--list =-a =--all =-r =--remotes =-v =-vv =--show-current #0", "/^--(contains|merged|points-at)/"],
      valued: "--sort --format --contains --no-contains --merged --no-merged --points-at --color --column",
    },
  },
  tag: {
    if: "-d --delete~4 -f --force~4",
    danger: "git tag -d (or -f) deletes or moves a tag",
    readOnly: {
      without: "-d --delete -a --annotate -s --sign -u --local-user -m --message -F --file -f --force -e --edit",
      if: "=-l =--list #0",
      valued: "--sort --format --contains --points-at -n",
    },
  },
  rebase: {
    if: { not: "=--abort =--quit =--show-current-patch =--continue =--skip =--edit-todo" },
    danger: "git rebase rewrites the branch's history",
  },
  commit: { if: "--amend~4", danger: "git commit --amend rewrites the last commit" },
  "filter-branch filter-repo replace": HISTORY,
  reflog: {
    if: "@expire @delete",
    danger: "git reflog {arg} deletes recovery points",
    readOnly: { if: "@ @show @-" },
  },
  gc: { if: "--prune", danger: `git gc --prune ${LOST_WORK}` },
  prune: { danger: `git prune ${LOST_WORK}` },
  "update-ref": { if: "-d =--stdin", danger: "git update-ref changes or deletes branches directly" },
  rm: { if: "-f --force~4", danger: "git rm -f deletes files with uncommitted changes" },
  worktree: {
    if: { all: ["@remove", "=-f =--force -f"] },
    danger: "git worktree remove --force deletes uncommitted changes",
    readOnly: { if: "@list" },
  },
  "checkout-index read-tree": OVERWRITES,
  config: {
    match: "config",
    readOnly: {
      if: "@get @list --get --get-all --get-regexp --get-urlmatch --list =-l",
      without: "--add --unset --unset-all --replace-all --edit -e --rename-section --remove-section set unset",
    },
  },
  "difftool mergetool": { scripts: "-x --extcmd" },
  submodule: { match: "foreach" },
  bisect: { match: "bisect" },
  "clone fetch pull ls-remote": { network: true },
  "status log diff show rev-parse ls-files ls-tree blame describe shortlog grep cat-file rev-list show-ref": {
    readOnly: true,
  },
  "merge-base name-rev diff-tree diff-files diff-index for-each-ref count-objects whatchanged version": {
    readOnly: true,
  },
  remote: { readOnly: { if: "@ @show @get-url" } },
};

/** git configuration keys (`-c KEY=…`, `git config KEY …`) whose value is a program git runs later. */
export const GIT_PROGRAM_KEYS = new RegExp(
  "^(core\\.(pager|editor|fsmonitor|sshcommand|hookspath|gitproxy|askpass|alternaterefscommand|worktree)|alias\\..+" +
    "|pager\\..+|.+\\.textconv|diff\\..+\\.command|diff\\.external|merge\\..+\\.driver|filter\\..+\\.(clean|smudge|process)" +
    "|credential\\.(.+\\.)?helper|gpg\\.(.+\\.)?program|sequence\\.editor|uploadpack\\.packobjectshook" +
    "|remote\\..+\\.(uploadpack|receivepack|vcs|proxy)|protocol\\..+\\.allow|include\\.path|includeif\\..+" +
    "|init\\.templatedir|web\\.browser|browser\\..+\\.(cmd|path)|man\\..+\\.(cmd|path)|mergetool\\..+\\.cmd" +
    "|difftool\\..+\\.cmd|http\\.proxy|safe\\.directory|submodule\\..+\\.update)$",
  "i",
);

/** Variables whose value is a command some program runs (`GIT_SSH_COMMAND`, `PAGER`, `BASH_ENV`...). */
export const PROGRAM_VARIABLES =
  "GIT_EXTERNAL_DIFF GIT_SSH_COMMAND GIT_SSH GIT_PAGER PAGER MANPAGER GIT_EDITOR EDITOR VISUAL GIT_SEQUENCE_EDITOR " +
  "GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS BASH_ENV ENV PROMPT_COMMAND GIT_PROXY_COMMAND LESSOPEN LESSCLOSE GIT_EXEC_PATH " +
  "GIT_TEMPLATE_DIR GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM";
/** Variables that set git options on the command line. */
export const GIT_CONFIG_VARIABLES = /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/;
/** Variables that only change formatting (`LC_ALL=C sort`): a read-only line stays read-only. */
export const HARMLESS_VARIABLES =
  /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR(_FORCE)?|COLUMNS|LINES|TERM|GREP_COLORS?)$/;

/** Names whose redefinition as a function (besides every row above) changes what later commands mean. */
export const SHADOWED = "unalias set export trap read hash";

/** Interpreter options that take a value (so the script file is found after them). */
export const INTERPRETER_VALUED = "-W -X -r --require --import --loader --experimental-loader -C --conditions -I";

/** Where a program reads its code from stdin. */
export const STDIN_PATHS = "/dev/stdin /dev/fd/0 /proc/self/fd/0";

/** find's tests that pick files by name: without one, `find . -delete` empties the workspace. */
export const FIND_NAME_TESTS =
  "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -newer -samefile -inum -links";
/** Programs that delete, move or overwrite the paths they are given (handed every file by find or xargs). */
export const DESTRUCTIVE = "rm unlink rmdir shred rimraf truncate mv srm wipe";
/** Programs whose output is paths under the folders they are given (what xargs then hands on). */
export const LISTS_PATHS_UNDER = "find fd fdfind ls git rg grep";

/** Credentials in the home folder: hidden in the sandbox, and any command naming them asks. */
export const HOME_SECRETS: readonly string[] = (
  ".ssh .gnupg .aws .azure .config/gcloud .config/gh .config/hub .kube .docker .netrc .npmrc .yarnrc .yarnrc.yml " +
  ".pypirc .git-credentials .config/git/credentials .gem/credentials .cargo/credentials .cargo/credentials.toml " +
  ".password-store .local/share/keyrings .terraform.d/credentials.tfrc.json .vault-token .pgpass .my.cnf"
).split(" ");

/** The file system's top folders that belong to the system (writing there asks). */
export const SYSTEM_DIRS =
  "/etc /usr /bin /sbin /lib /lib32 /lib64 /libx32 /boot /var /opt /srv /sys /proc /run /snap /nix /root /home /mnt " +
  "/media /tmp /dev";
/** Top folders of other people's and mounted files: the folder itself is the system's, what is in it is "outside". */
export const SHARED_DIRS = "/home /mnt /media";
export const TEMP_DIRS = "/tmp /var/tmp /dev/shm";
export const HARMLESS_DEVICES = "/dev/null /dev/stdout /dev/stderr /dev/tty /dev/zero /dev/full";
