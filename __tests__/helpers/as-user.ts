import { spawnSync } from "node:child_process";
import { chownSync, existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "./cli.js";

/**
 * Running the project's code as another user (setpriv), wherever the clone lives (issue 44 item
 * 9). A clone in a private folder (`mktemp -d` makes them mode 700) cannot be entered by that user,
 * so its tsx and sources (or a Node installed there) cannot run as them. Then the command runs in a mount namespace of its
 * own where the private folder is covered by an empty tmpfs with the project (and node_modules,
 * where it really is) bound back at the same paths: that user reaches the project and nothing
 * else of the folder; the host's mounts are not touched. Where even that is impossible (no
 * `unshare`, no right to mount), `userRunProblem` says why, and the tests skip with it.
 */

/**
 * What a run as another user reads: the project's files, its node_modules and the Node that runs
 * them (an nvm install under a private home), where they really are.
 */
function neededRoots(): string[] {
  const modules = path.join(PROJECT_ROOT, "node_modules");
  const real = existsSync(modules) ? realpathSync(modules) : modules;
  const node = path.dirname(path.dirname(realpathSync(process.execPath)));
  return [...new Set([PROJECT_ROOT, real, node])];
}

const setpriv = (uid: number, argv: readonly string[]) => [
  `--reuid=${uid}`,
  `--regid=${uid}`,
  "--clear-groups",
  ...argv,
];

function canAs(uid: number, test: string, p: string): boolean {
  return spawnSync("setpriv", setpriv(uid, ["test", test, p]), { stdio: "ignore" }).status === 0;
}

/** The highest folder on the way to `p` that `uid` cannot enter, if any. */
function blockingFolder(uid: number, p: string): string | undefined {
  const parts = p.split(path.sep).filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const dir = `/${parts.slice(0, i).join("/")}`;
    if (!canAs(uid, "-x", dir)) return dir;
  }
  return undefined;
}

const q = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The script run as root in the new mount namespace: each needed root is held open (a descriptor
 * from 3 on), each blocking folder covered with an empty tmpfs, each root bound back at its path
 * from its descriptor (not canonicalised: by path it would name the new, empty folder), the
 * descriptors closed, then the command ("$@": setpriv and the run) starts.
 */
function viewScript(roots: readonly string[], covers: readonly string[]): string {
  return [
    "set -e",
    ...roots.map((root, i) => `exec ${i + 3}<${q(root)}`),
    ...covers.map((dir) => `mount -t tmpfs -o mode=755 mc-view ${q(dir)}`),
    ...roots.map(
      (root, i) => `mkdir -p ${q(root)} && mount --no-canonicalize --bind /proc/self/fd/${i + 3} ${q(root)}`,
    ),
    ...roots.map((_, i) => `exec ${i + 3}<&-`),
    'exec "$@"',
  ].join("\n");
}

type Plan = { kind: "direct" } | { kind: "view"; roots: string[]; covers: string[] } | { kind: "none"; why: string };
const plans = new Map<number, Plan>();

function viewArgs(plan: Extract<Plan, { kind: "view" }>, uid: number, argv: readonly string[]): string[] {
  return [
    "--mount",
    "--propagation",
    "private",
    "--",
    "sh",
    "-c",
    viewScript(plan.roots, plan.covers),
    "sh",
    "setpriv",
    ...setpriv(uid, argv),
  ];
}

function planFor(uid: number): Plan {
  let plan = plans.get(uid);
  if (plan) return plan;
  const roots = neededRoots();
  const blocked = roots.map((root) => blockingFolder(uid, root));
  if (blocked.every((b) => b === undefined)) plan = { kind: "direct" };
  else {
    const covers = [...new Set(blocked.filter((b): b is string => b !== undefined))].filter(
      (dir, _, all) => !all.some((other) => other !== dir && dir.startsWith(`${other}/`)),
    );
    const held = roots.filter((root) => covers.some((c) => root.startsWith(`${c}/`)));
    plan = { kind: "view", roots: held, covers };
    const probe = spawnSync("unshare", viewArgs(plan, uid, ["test", "-r", path.join(PROJECT_ROOT, "package.json")]), {
      encoding: "utf8",
    });
    if (probe.status !== 0)
      plan = {
        kind: "none",
        why: `uid ${uid} cannot enter ${covers.join(", ")} on the way to the project, and a mount namespace that would let it in could not be made (${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim()})`,
      };
  }
  plans.set(uid, plan);
  return plan;
}

/** Why the project's code cannot run as `uid` here, or undefined when it can (asUser). */
export function userRunProblem(uid: number): string | undefined {
  const plan = planFor(uid);
  return plan.kind === "none" ? plan.why : undefined;
}

/**
 * `argv` as `uid`: `[file, args]` for spawn or spawnSync. setpriv alone when the user reaches the
 * project; through a private mount namespace when the clone is in a folder it cannot enter.
 */
export function asUser(uid: number, argv: readonly string[]): [string, string[]] {
  const plan = planFor(uid);
  if (plan.kind === "none") throw new Error(plan.why);
  return plan.kind === "direct" ? ["setpriv", setpriv(uid, argv)] : ["unshare", viewArgs(plan, uid, argv)];
}

/** For a test that runs the project as `uid`: skip it with the reason printed when that cannot be done here. */
export function skipUnlessReachable(uid: number, what: string): boolean {
  const problem = userRunProblem(uid);
  if (problem) console.warn(`${what}: skipped, ${problem}`);
  return problem !== undefined;
}

/**
 * Whether a test may run the project's code as `uid` here (undefined: as this process, always):
 * root is needed to change user, and the project must be reachable for it (the reason printed when not).
 */
export function runsAs(uid: number | undefined, what: string): boolean {
  if (uid === undefined) return true;
  if (process.getuid?.() !== 0) return false;
  return !skipUnlessReachable(uid, what);
}

/** Makes a tree readable and writable by `uid` (following links, as the tests' trees have none to keep). */
export function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) chownTree(p, uid);
    else chownSync(p, uid, uid);
  }
}
