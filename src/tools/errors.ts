import { PathError } from "../workspace/paths.js";

/**
 * Turns anything a tool threw into text for the model. A refused or failed call never
 * crashes the run: the model reads this and decides what to do next.
 */
export function toolErrorMessage(err: unknown): string {
  if (err instanceof PathError) return err.message;
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case "EACCES":
    case "EPERM":
      return `Error: permission denied (${e.path ?? "path"}).`;
    case "ENOSPC":
      return "Error: no space left on the device.";
    case "EISDIR":
      return "Error: that path is a directory.";
    default:
      return `Error: ${e?.message ?? String(err)}`;
  }
}
