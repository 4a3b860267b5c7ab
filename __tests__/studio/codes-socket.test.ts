import { spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { WaitingApproval } from "../../src/graph/studio-secret.js";
import { formatWaiting, serveWaitingCodes } from "../../src/studio/codes-socket.js";
import { NOBODY, RUNNING_AS_ROOT } from "../helpers/cli.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";

/**
 * Issue 44 item 7: the Studio server's waiting approval codes, listed to the person on a Unix
 * socket in a private folder; another local user (uid 65534 through setpriv) cannot read them,
 * and a folder that is not private is refused.
 */

const WAITING: WaitingApproval[] = [
  { threadId: "t-1", tool: "execute_command", reason: "runs a shell command", code: "ABCDE-FGHJK" },
];

let tmp: ReturnType<typeof makeTempDir>;
const servers: net.Server[] = [];
beforeEach(() => {
  tmp = makeTempDir("mc-codes-");
});
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  tmp.cleanup();
});

function serve(folder: string): string {
  const socket = path.join(folder, "studio-2024.sock");
  const served = serveWaitingCodes(socket, () => WAITING);
  if ("problem" in served) throw new Error(served.problem);
  servers.push(served.server);
  return socket;
}

function ask(socket: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socket);
    let text = "";
    c.setEncoding("utf8");
    c.on("data", (d) => (text += d));
    c.on("end", () => resolve(text));
    c.on("error", reject);
  });
}

/** A connection to `socket` as uid `uid` (setpriv): what it read, or the error it got. */
function askAs(uid: number, socket: string): Promise<string> {
  const script = `const c = require("node:net").connect(process.argv[1]); let t = ""; c.on("data", (d) => (t += d)); c.on("end", () => console.log("READ " + t)); c.on("error", (e) => console.log("ERROR " + e.code));`;
  const child = spawn(
    "setpriv",
    [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, "-e", script, socket],
    {
      cwd: "/",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on("close", () => resolve(out.trim())));
}

test("the person gets the waiting codes, each with its call, from a socket of mode 600", async () => {
  const socket = serve(tmp.dir);
  await waitFor(() => {
    try {
      return statSync(socket).isSocket() && (statSync(socket).mode & 0o777) === 0o600;
    } catch {
      return false;
    }
  });
  expect(await ask(socket)).toBe(
    'One-time approval codes waiting (1):\n  ABCDE-FGHJK  execute_command in thread t-1 (runs a shell command)\nApprove in Studio by resuming with {"decision": "approve", "code": "<code>"}.\n',
  );
  expect(formatWaiting([])).toBe("No call waits for an approval code in this Studio server.\n");
});

(RUNNING_AS_ROOT ? test : test.skip)(
  "another local user cannot connect: the folder is the person's, mode 700",
  async () => {
    const socket = serve(tmp.dir);
    await waitFor(() => statSync(socket, { throwIfNoEntry: false })?.isSocket());
    expect((statSync(tmp.dir).mode & 0o777).toString(8)).toBe("700");
    expect(await askAs(NOBODY, socket)).toBe("ERROR EACCES");
    // Not even with the socket itself opened to everyone: the folder keeps them out.
    chmodSync(socket, 0o777);
    expect(await askAs(NOBODY, socket)).toBe("ERROR EACCES");
    // The person still reads it.
    expect(await ask(socket)).toContain("ABCDE-FGHJK");
  },
);

test("a folder open to others, someone else's, or a link is not used", () => {
  const open = path.join(tmp.dir, "open");
  mkdirSync(open, { mode: 0o755 });
  chmodSync(open, 0o755);
  expect(serveWaitingCodes(path.join(open, "s.sock"), () => WAITING)).toEqual({
    problem: `${open} is open to other users (mode 755)`,
  });
  if (RUNNING_AS_ROOT) {
    const theirs = path.join(tmp.dir, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, NOBODY, NOBODY);
    expect(serveWaitingCodes(path.join(theirs, "s.sock"), () => WAITING)).toEqual({
      problem: `${theirs} belongs to another user`,
    });
  }
  const file = path.join(tmp.dir, "file");
  writeFileSync(file, "");
  expect(serveWaitingCodes(path.join(file, "s.sock"), () => WAITING)).toEqual({
    problem: `${file} is not a folder (a link, or a file)`,
  });
});

test("a stale socket of a killed server is replaced", async () => {
  const socket = path.join(tmp.dir, "studio-2024.sock");
  const killed = spawn(process.execPath, ["-e", 'require("node:net").createServer().listen(process.argv[1])', socket], {
    stdio: "ignore",
  });
  await waitFor(() => statSync(socket, { throwIfNoEntry: false })?.isSocket());
  killed.kill("SIGKILL");
  await new Promise((r) => killed.once("close", r));
  expect(statSync(socket).isSocket()).toBe(true);
  serve(tmp.dir);
  await waitFor(async () => (await ask(socket).catch(() => "")).includes("ABCDE-FGHJK"));
});
