import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { WaitingApproval } from "../graph/studio-secret.js";
import { gateText } from "../workspace/output-gate.js";

/**
 * The Studio server's one-time approval codes, for the person again (issue 44 item 7): printed
 * once, they scroll away under the dev server's request log, so `npm run studio -- codes` asks
 * for the ones still waiting over a Unix socket in a folder only the person's user can enter
 * (mode 700, theirs, checked before it is used): another user cannot connect, and the agent's
 * sandboxed commands do not see the folder (a private /tmp, the runtime folder hidden). The
 * socket answers each connection with the list and closes; it reads nothing.
 */

/** Why `folder` may not hold the socket (not a folder, someone else's, open to others), or undefined. */
export function privateFolderProblem(folder: string): string | undefined {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(folder);
  } catch {
    return `${folder} does not exist`;
  }
  if (!st.isDirectory()) return `${folder} is not a folder (a link, or a file)`;
  if (st.uid !== process.getuid?.()) return `${folder} belongs to another user`;
  if ((st.mode & 0o077) !== 0) return `${folder} is open to other users (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/** What the socket answers: the codes waiting, each with its call, and how to use one. */
export function formatWaiting(waiting: readonly WaitingApproval[]): string {
  if (waiting.length === 0) return "No call waits for an approval code in this Studio server.\n";
  const rows = waiting.map(
    (w) =>
      // The tool and reason come from the model: through the output gate. The code must not be (it is one of the gate's secrets).
      `  ${w.code}  ${gateText(`${w.tool}${w.askedBy ? ` of sub-agent ${w.askedBy}` : ""} in thread ${w.threadId} (${w.reason})`)}`,
  );
  return [
    `One-time approval codes waiting (${waiting.length}):`,
    ...rows,
    'Approve in Studio by resuming with {"decision": "approve", "code": "<code>"}.',
    "",
  ].join("\n");
}

/**
 * Serves `list()` at `socketPath`, whose folder must be private (else nothing is served and the
 * reason is returned). A stale socket of an earlier server is replaced; the socket file is mode
 * 600 and removed when the process exits.
 */
export function serveWaitingCodes(
  socketPath: string,
  list: () => readonly WaitingApproval[],
): { server: net.Server } | { problem: string } {
  const problem = privateFolderProblem(path.dirname(socketPath));
  if (problem) return { problem };
  try {
    if (lstatSync(socketPath).isSocket()) unlinkSync(socketPath);
  } catch {
    // Nothing there.
  }
  const server = net.createServer((socket) => {
    socket.on("error", () => socket.destroy());
    socket.end(formatWaiting(list()));
  });
  server.on("error", () => server.close());
  server.listen(socketPath, () => {
    try {
      chmodSync(socketPath, 0o600);
    } catch {
      // The folder keeps others out either way.
    }
  });
  server.unref();
  process.once("exit", () => {
    try {
      unlinkSync(socketPath);
    } catch {
      // Already gone.
    }
  });
  return { server };
}
