import { execFile, spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { STATE_DIR_NAME } from "../memory/state-dir.js";
import { MAX_CONFIG_BYTES, readRegularTextSync } from "../regular-file.js";
import type { SpawnSpecBuilder } from "../workspace/processes.js";
import { processAlive } from "../process-life.js";
import type { CacheSettings } from "../contracts/host.js";
import { realOr, writableCaches, withoutCredentials } from "./caches.js";
import { kindAt } from "./files.js";
import { HOME_SECRETS } from "./classify-tables.js";
import { rulesFilePaths } from "./rules.js";
import type { SandboxSetting } from "../contracts/run-choices.js";
import { stateHome as configuredStateHome } from "../memory/state-dir.js";

/**
 * Runs every command inside bubblewrap (bwrap): the file system read-only except the
 * workspace, a private /tmp and the package managers' caches; credentials in the home folder
 * hidden; its own PID namespace and session, dying with its parent — so when mini-cursor stops
 * a command (or exits), everything it started, `setsid` children included, goes with it.
 */

export const INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

/** Config files whose non-secret settings (registry, cafile, proxy) commands need: a copy without credentials is shown. */
const CONFIG_WITH_CREDENTIALS = new Set([".npmrc", ".yarnrc", ".yarnrc.yml"]);
/** Under ~/.config, credential files beyond the fixed list: `gh`-style hosts.json, *token*, *credential*, *secret*. */
const CONFIG_CREDENTIAL_NAME = /^hosts\.json$|token|credential|secret/i;
/** How deep under ~/.config credential files are looked for. */
const CONFIG_SEARCH_DEPTH = 3;

/**
 * Run as root, bubblewrap keeps root's capabilities: a command could remount / read-write or
 * unmount what hides the credentials. Without any capability, uid 0 is only an owner of files
 * (bubblewrap also sets no_new_privs, so setuid programs cannot give them back).
 */
const NO_CAPABILITIES = ["--cap-drop", "ALL"];

export interface BubblewrapStatus {
  available: boolean;
  /** Why it cannot be used: not installed, or installed but refusing to start here. */
  problem?: string;
}

const detected = new Map<string, BubblewrapStatus>();
const probes = new Map<string, Promise<BubblewrapStatus>>();
const PROBE_TIMEOUT_MS = 5_000;

/** The options every sandbox starts with (the probe runs `true` with them). */
function baseArgs(network: boolean): string[] {
  const args = ["--die-with-parent", "--new-session", "--unshare-pid", ...NO_CAPABILITIES];
  if (!network) args.push("--unshare-net");
  return [...args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
}

function probeStatus(
  error: NodeJS.ErrnoException | undefined,
  exitStatus: number | null,
  stderr: string,
): BubblewrapStatus {
  if (error?.code === "ENOENT") return { available: false, problem: "bubblewrap (bwrap) is not installed" };
  if (exitStatus === 0) return { available: true };
  const why = (stderr || error?.message || `exit status ${exitStatus}`).trim().split("\n")[0];
  return { available: false, problem: `bubblewrap is installed but cannot start a sandbox here (${why})` };
}

/** Whether bwrap is installed and can start a sandbox with the options we use (cached). */
export function detectBubblewrap(network = true, program = "bwrap"): BubblewrapStatus {
  const key = `${program}:${network}`;
  if (!detected.has(key)) {
    const run = spawnSync(program, [...baseArgs(network), "true"], { encoding: "utf8", timeout: PROBE_TIMEOUT_MS });
    detected.set(key, probeStatus(run.error, run.status, run.stderr ?? ""));
  }
  return detected.get(key)!;
}

/**
 * detectBubblewrap without blocking: bwrap starts in the background (the CLI starts it before
 * loading the agent, which takes longer), and its answer is what detectBubblewrap returns from
 * then on. Same answer, same messages.
 */
export function probeBubblewrap(network = true, program = "bwrap"): Promise<BubblewrapStatus> {
  const key = `${program}:${network}`;
  const hit = detected.get(key);
  if (hit) return Promise.resolve(hit);
  let probe = probes.get(key);
  if (probe) return probe;
  probe = new Promise<BubblewrapStatus>((resolve) => {
    execFile(program, [...baseArgs(network), "true"], { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      // What spawnSync reports: an error for a probe that never started or did not finish in
      // time (then no exit status), else the exit status.
      const failed = error?.killed
        ? Object.assign(new Error(`spawnSync ${program} ETIMEDOUT`), { code: "ETIMEDOUT" })
        : typeof error?.code === "string"
          ? (error as NodeJS.ErrnoException)
          : undefined;
      const exitStatus = error ? (typeof error.code === "number" ? error.code : null) : 0;
      const status = detected.get(key) ?? probeStatus(failed, exitStatus, stderr);
      detected.set(key, status);
      probes.delete(key);
      resolve(status);
    });
  });
  probes.set(key, probe);
  return probe;
}

export interface SandboxOptions {
  workspace: string;
  /** Default: os.homedir(). */
  home?: string;
  /** Network access (default true); false gives the sandbox its own, empty network namespace. */
  network?: boolean;

  /** The bwrap program (default `bwrap`). */
  program?: string;
  /** The host's Unix sockets to hide: $XDG_RUNTIME_DIR (session bus, user services)... */
  runtimeDir?: string;
  /** ...and the ssh-agent socket ($SSH_AUTH_SOCK), unless `keepSshAgent` (passed through by name). */
  sshAuthSock?: string;
  keepSshAgent?: boolean;
  /** Where the package managers' caches really are, and extra writable folders. */
  caches?: CacheSettings;
}

/** Sockets that hand out root (docker) or run programs outside the sandbox; hidden even with network on. */
const SYSTEM_SOCKETS = [
  "/run/docker.sock",
  "/var/run/docker.sock",
  "/run/podman/podman.sock",
  "/run/containerd/containerd.sock",
];

/**
 * bwrap arguments that hide the host's Unix sockets (a socket is reachable whatever the
 * network namespace: only the file system hides it). Without network, all of /run goes; with
 * network, /run stays (resolv.conf often lives there) but the user's runtime folder, the
 * ssh-agent and container-engine sockets are hidden.
 */
function socketArgs(options: SandboxOptions & SandboxFiles, home: string): string[] {
  const args: string[] = [];
  if (options.network === false) {
    for (const dir of ["/run", "/var/run"]) if (kindOf(dir) === "dir") args.push("--tmpfs", dir);
  } else {
    for (const socket of SYSTEM_SOCKETS)
      if (kindOf(socket) === "socket") args.push("--ro-bind", options.emptyFile, socket);
  }
  const runtime = options.runtimeDir && path.resolve(options.runtimeDir);
  if (runtime && kindOf(runtime) === "dir" && runtime !== home && !isInside(runtime, path.resolve(options.workspace))) {
    args.push("--tmpfs", runtime);
  }
  const agent = options.sshAuthSock && path.resolve(options.sshAuthSock);
  const alreadyHidden = (p: string) =>
    (runtime && isInside(runtime, p)) ||
    (options.network === false && (isInside("/run", p) || isInside("/var/run", p)));
  if (agent && !options.keepSshAgent && kindOf(agent) === "socket" && !alreadyHidden(agent)) {
    args.push("--ro-bind", options.emptyFile, agent);
  }
  return args;
}

function isInside(dir: string, p: string): boolean {
  return p === dir || p.startsWith(`${dir}/`);
}

const kindOf = (p: string) => kindAt(p, false);

/** Host paths a session's sandbox uses. */
export interface SandboxFiles {
  /** Mounted as the sandbox's /tmp. */
  tmpDir: string;
  /** An empty read-only file mounted over credentials files. */
  emptyFile: string;
  /** Where credential-free copies of package-manager configs are written (else they show empty). */
  configDir?: string;
}

/** The bwrap arguments for one command (before the program to run). */
export function bubblewrapArgs(options: SandboxOptions & SandboxFiles, cwd: string): string[] {
  const home = path.resolve(options.home ?? os.homedir());
  const workspace = path.resolve(options.workspace);
  // Before the workspace: a workspace under /tmp is bound on top of the private /tmp.
  const args = [...baseArgs(options.network !== false), "--bind", options.tmpDir, "/tmp"];
  const caches = writableCaches(home, options.caches);
  for (const cache of caches.writable) {
    if (kindOf(cache) === "dir") args.push("--bind", cache, cache);
  }
  // Writable for the command, thrown away after it: the host's copy is never written.
  for (const dir of caches.scratch) {
    if (kindOf(dir) === "dir") args.push("--tmpfs", dir);
  }
  const realWorkspace = realOr(workspace);
  args.push("--bind", realWorkspace, realWorkspace);
  if (realWorkspace !== workspace) args.push("--bind", realWorkspace, workspace);
  // After the workspace and the caches, in case either holds the home folder.
  args.push(...credentialArgs(home, options));
  args.push(...socketArgs(options, home));
  // Commands may not rewrite the project's command rules (nor the folder a repository keeps them in).
  for (const file of rulesFilePaths(workspace)) {
    if (kindOf(file) === "file") args.push("--ro-bind", file, file);
  }
  const stateDir = path.join(workspace, STATE_DIR_NAME);
  if (kindOf(stateDir) === "dir") args.push("--ro-bind", stateDir, stateDir);
  // mini-cursor's private state (threads, snapshots) stays read-only wherever it was put.
  const stateHome = configuredStateHome();
  if (kindOf(stateHome) === "dir") args.push("--ro-bind", stateHome, stateHome);
  args.push("--setenv", "MINI_CURSOR_SANDBOX", "bubblewrap", "--chdir", cwd);
  return args;
}

/** Where a path really is and what it is, following symlinks (a dotfiles manager links ~/.npmrc). */
function resolved(p: string): { path: string; kind: "dir" | "file" } | undefined {
  try {
    const target = realpathSync(p);
    const kind = kindAt(target);
    return kind === "dir" || kind === "file" ? { path: target, kind } : undefined;
  } catch {
    return undefined;
  }
}

/** Credential files under ~/.config not in the fixed list, a few levels deep. */
function configCredentials(home: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const p = path.join(dir, entry.name);
      if (CONFIG_CREDENTIAL_NAME.test(entry.name) && (entry.isFile() || entry.isSymbolicLink() || entry.isDirectory()))
        found.push(p);
      else if (entry.isDirectory() && depth < CONFIG_SEARCH_DEPTH) walk(p, depth + 1);
    }
  };
  walk(path.join(home, ".config"), 1);
  return found;
}

/**
 * Hides credentials: folders get an empty tmpfs, files an empty file — or, for package-manager
 * configs, a copy without credential lines — mounted at their real place (symlinks resolved).
 */
function credentialArgs(home: string, options: SandboxOptions & SandboxFiles): string[] {
  const args: string[] = [];
  const done = new Set<string>();
  const candidates = [...HOME_SECRETS.map((s) => path.join(home, s)), ...configCredentials(home)];
  for (const [i, p] of candidates.entries()) {
    const target = resolved(p);
    if (!target || done.has(target.path)) continue;
    done.add(target.path);
    if (target.kind === "dir") {
      args.push("--tmpfs", target.path);
      continue;
    }
    let replacement = options.emptyFile;
    if (options.configDir && CONFIG_WITH_CREDENTIALS.has(path.basename(p))) {
      try {
        replacement = path.join(options.configDir, `${i}-${path.basename(p)}`);
        // The person's file, through a link from a dotfiles manager too; a FIFO there is not waited on.
        const text = readRegularTextSync(target.path, { follow: true, maxBytes: MAX_CONFIG_BYTES });
        writeFileSync(replacement, withoutCredentials(text), { mode: 0o444 });
      } catch {
        replacement = options.emptyFile;
      }
    }
    args.push("--ro-bind", replacement, target.path);
  }
  return args;
}

/** Session folders are named `mini-cursor-sandbox-<pid>-XXXXXX` in the system's temp folder. */
const SESSION_PREFIX = "mini-cursor-sandbox-";

/** Group and other permission bits: a session folder mkdtemp made has none. */
const SHARED_BITS = 0o077;

/**
 * Removes the folders of this user's sessions whose process is gone (killed without an exit
 * event, e.g. SIGHUP). The temporary folder is shared: a folder of that name another user made,
 * a link, or a folder others can enter is never touched (only a private folder of ours, which
 * nobody else can change while it is removed), and one that cannot be removed is left as it is.
 */
function removeStaleSessions(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(/^mini-cursor-sandbox-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    const folder = path.join(dir, name);
    try {
      const st = lstatSync(folder);
      if (!st.isDirectory() || st.uid !== uid || (st.mode & SHARED_BITS) !== 0) continue;
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // Not ours to remove, or not removable now: the next session tries again.
    }
  }
}

export interface Sandbox {
  /** How the process runner starts `bash -c script` inside bwrap. */
  spawnSpec: SpawnSpecBuilder;
  /** Removes the private /tmp. */
  dispose(): void;
}

/** A sandbox for one session; its private /tmp lives as long as the session. */
export function createSandbox(options: SandboxOptions): Sandbox {
  let files: SandboxFiles | undefined;
  let sessionDir: string | undefined;
  const home = path.resolve(options.home ?? os.homedir());
  const cleanup = () => {
    if (sessionDir) rmSync(sessionDir, { recursive: true, force: true });
    sessionDir = undefined;
    files = undefined;
  };
  const prepare = (): SandboxFiles => {
    if (!files) {
      removeStaleSessions(os.tmpdir());
      sessionDir = mkdtempSync(path.join(os.tmpdir(), `${SESSION_PREFIX}${process.pid}-`));
      files = {
        tmpDir: path.join(sessionDir, "tmp"),
        emptyFile: path.join(sessionDir, "empty"),
        configDir: path.join(sessionDir, "config"),
      };
      mkdirSync(files.tmpDir, { mode: 0o1777 });
      mkdirSync(files.configDir!);
      writeFileSync(files.emptyFile, "", { mode: 0o444 });
      process.once("exit", cleanup);
    }
    const wanted = writableCaches(home, options.caches);
    // The scratch folders too: bwrap cannot make a mount point inside the read-only home.
    for (const cache of [...wanted.create, ...wanted.scratch]) {
      try {
        mkdirSync(cache, { recursive: true });
      } catch {
        // A read-only home: the cache stays read-only too.
      }
    }
    return files;
  };
  return {
    spawnSpec: (script, cwd) => ({
      file: options.program ?? "bwrap",
      args: [...bubblewrapArgs({ ...options, ...prepare() }, cwd), "--", "bash", "-c", script],
    }),
    dispose() {
      cleanup();
      process.off("exit", cleanup);
    },
  };
}

/** Raised when `--sandbox on` is asked for and bubblewrap cannot be used. */
export class SandboxUnavailableError extends Error {
  override name = "SandboxUnavailableError";
}

export interface SandboxPlan {
  sandbox?: Sandbox;
  /** One line for the banner. */
  summary: string;
}

/** What `--sandbox auto|on|off` comes to on this machine. */
export function planSandbox(mode: SandboxSetting, options: SandboxOptions): SandboxPlan {
  const network = options.network !== false;
  if (mode === "off") return { summary: "off (--sandbox off): commands can change any file you can" };
  const status = detectBubblewrap(network, options.program);
  if (!status.available) {
    if (mode === "on")
      throw new SandboxUnavailableError(
        `--sandbox on needs bubblewrap, but ${status.problem}. To use it, ${INSTALL_HINT}.`,
      );
    return { summary: `off: ${status.problem}; to turn it on, ${INSTALL_HINT}` };
  }
  return {
    sandbox: createSandbox(options),
    summary: `bubblewrap: only the workspace is writable, credentials hidden, network ${network ? "on" : "off"}`,
  };
}
