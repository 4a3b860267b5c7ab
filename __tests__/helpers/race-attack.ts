import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Toolset } from "../../src/tools/index.js";

/**
 * The race attack on the file tools, shared by the in-process test and the one run as an
 * ordinary user: in the workspace, `d` (a real folder with a decoy) and `lnk` (a symlink to a
 * folder outside holding a secret) trade places with renameat2(RENAME_EXCHANGE) in a loop,
 * while the tools are called on paths through `d`.
 */

export const SECRET = "SECRET-KEY-0f9a2c";
export const OUTSIDE_ONLY = "only-outside.txt";

/** Python: exchange two names as fast as possible until killed; prints "ready" once it runs. */
const SWAPPER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
if libc.renameat2(-100, a, -100, b, 2) != 0:
    print("error", ctypes.get_errno(), flush=True); sys.exit(1)
print("ready", flush=True)
while True:
    libc.renameat2(-100, a, -100, b, 2)
`;

export function prepareRace(workspace: string, outsideDir: string): void {
  mkdirSync(path.join(workspace, "d"));
  writeFileSync(path.join(workspace, "d", "id_rsa"), "decoy\n");
  writeFileSync(path.join(workspace, "d", "decoy.txt"), "decoy\n");
  mkdirSync(path.join(outsideDir, "secret"));
  writeFileSync(path.join(outsideDir, "secret", "id_rsa"), `${SECRET}\n`);
  writeFileSync(path.join(outsideDir, "secret", OUTSIDE_ONLY), `${SECRET}\n`);
  symlinkSync(path.join(outsideDir, "secret"), path.join(workspace, "lnk"));
}

/** Starts the swapper and resolves once it is swapping. */
export async function startSwapper(workspace: string): Promise<ChildProcess> {
  const child = spawn("python3", ["-c", SWAPPER, path.join(workspace, "d"), path.join(workspace, "lnk")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const first = await new Promise<string>((resolve) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    child.once("exit", () => resolve("exited"));
  });
  if (first !== "ready")
    throw new Error(`the swapper did not start (${first}); renameat2 needs Linux 3.15+ and glibc 2.28+`);
  return child;
}

export interface RaceFindings {
  /** Tool results that showed the secret or the outside-only name. */
  leaks: string[];
  calls: number;
}

/** Calls each tool `rounds` times on paths through the swapped folder; collects any leak. */
export async function attackTools(tools: Toolset, rounds: number): Promise<RaceFindings> {
  const leaks: string[] = [];
  let calls = 0;
  const call = async (name: keyof Toolset & string, args: Record<string, unknown>) => {
    calls++;
    const out = String(
      await (tools as unknown as Record<string, { invoke(a: unknown): Promise<unknown> }>)[name]!.invoke(args),
    );
    if (out.includes(SECRET) || out.includes(OUTSIDE_ONLY))
      leaks.push(`${name} ${JSON.stringify(args)}: ${out.slice(0, 200)}`);
  };
  for (let i = 0; i < rounds; i++) {
    await call("read_file", { filePath: "d/id_rsa" });
    await call("write_file", { filePath: "d/authorized_keys", content: `attacker ${i}\n` });
    await call("write_file", { filePath: "d/new/deep.txt", content: `attacker ${i}\n` });
    await call("edit_file", { filePath: "d/id_rsa", oldString: "decoy", newString: "decoy" + "x".repeat(0) + " " });
    await call("list_directory", { directoryPath: "d" });
    await call("find_files", { pattern: "*.txt" });
    await call("search_files", { pattern: "SECRET", path: "d" });
    await call("search_files", { pattern: "SECRET" });
    await call("search_files", { pattern: "SECRET", glob: "d/*" });
  }
  return { leaks, calls };
}

/** Names in the outside folder other than what the attack started with. */
export function writtenOutside(outsideDir: string): string[] {
  return readdirSync(path.join(outsideDir, "secret")).filter((n) => n !== "id_rsa" && n !== OUTSIDE_ONLY);
}
