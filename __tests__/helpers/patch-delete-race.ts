import { closeSync, constants, existsSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Toolset } from "../../src/tools/index.js";
import { startSwapper } from "./race-attack.js";

/**
 * The race attack on apply_patch's "*** Delete File": the workspace's `d` holds a decoy
 * `victim.txt`, and the folder the symlink `lnk` leads to (outside) holds a precious file of the
 * same name. While `d` and `lnk` trade places (renameat2 exchange, race-attack.ts), the model
 * reads d/victim.txt and deletes it with a patch, again and again. A delete that goes by name
 * after the verified read can land on the precious file; one through the verified folder cannot.
 */

export const PRECIOUS = "PRECIOUS-7d1e";
const NAME = "victim.txt";

export function preparePatchDeleteRace(workspace: string, outside: string): void {
  writeFileSync(path.join(workspace, "d", NAME), "decoy\n");
  writeFileSync(path.join(outside, "secret", NAME), `${PRECIOUS}\n`);
}

export interface PatchDeleteFindings {
  /** Rounds in which the patch reported the delete. */
  deleted: number;
  /** Whether the file outside is still there. */
  outsideIntact: boolean;
}

/** Runs `rounds` read-then-delete rounds under the swapper; puts the decoy back through a descriptor. */
export async function attackPatchDelete(
  tools: Toolset,
  workspace: string,
  outside: string,
  rounds: number,
): Promise<PatchDeleteFindings> {
  // The real folder, held open so the decoy can be put back whichever name it has now.
  const dirFd = openSync(path.join(workspace, "d"), constants.O_RDONLY | constants.O_DIRECTORY);
  const swapper = await startSwapper(workspace);
  const outsideFile = path.join(outside, "secret", NAME);
  const invoke = (name: "read_file" | "apply_patch", args: Record<string, unknown>) =>
    (tools as unknown as Record<string, { invoke(a: unknown): Promise<unknown> }>)[name]!.invoke(args);
  let deleted = 0;
  try {
    for (let i = 0; i < rounds && existsSync(outsideFile); i++) {
      writeFileSync(`/proc/self/fd/${dirFd}/${NAME}`, "decoy\n");
      await invoke("read_file", { filePath: `d/${NAME}` });
      const out = String(
        await invoke("apply_patch", { input: `*** Begin Patch\n*** Delete File: d/${NAME}\n*** End Patch` }),
      );
      if (out.startsWith("Applied")) deleted++;
    }
  } finally {
    swapper.kill("SIGKILL");
    closeSync(dirFd);
  }
  return { deleted, outsideIntact: existsSync(outsideFile) };
}
