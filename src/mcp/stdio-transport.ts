import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { McpLibraries } from "./libraries.js";
import { rememberGroup, stopGroup } from "../workspace/process-group.js";

/**
 * The client side of MCP's stdio transport, spawning the server the way commands are spawned:
 * in its own process group (so `npx some-server` and the node it starts go together), carrying
 * the session variable (so what leaves the group is still found), and killed with the whole
 * group on close and when mini-cursor exits. The SDK's StdioClientTransport signals only the
 * process it started, which leaves the grandchildren of `npx` behind.
 */

/** The last stderr characters kept, to say why a server died. */
export const STDERR_TAIL_CHARS = 2_000;

export interface StdioServerProcess {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface GroupStdioTransport extends Transport {
  /** What the server wrote to stderr lately (its own error messages). */
  stderrTail(): string;
  /** How the process ended, once it has. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

export function createGroupStdioTransport(
  server: StdioServerProcess,
  { ReadBuffer, serializeMessage }: Pick<McpLibraries, "ReadBuffer" | "serializeMessage">,
): GroupStdioTransport {
  let child: ChildProcessWithoutNullStreams | undefined;
  let stderr = "";
  let ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let closing = false;
  const buffer = new ReadBuffer();

  const transport: GroupStdioTransport = {
    stderrTail: () => stderr,
    exit: () => ended,
    start() {
      return new Promise<void>((resolve, reject) => {
        const proc = spawn(server.command, server.args, {
          cwd: server.cwd,
          env: server.env,
          stdio: ["pipe", "pipe", "pipe"],
          detached: true, // its own process group, so one kill(-pid) reaches every descendant
          windowsHide: true,
        });
        child = proc;
        proc.once("error", (err) => {
          ended ??= { code: null, signal: null };
          reject(err);
          transport.onerror?.(err);
          transport.onclose?.();
        });
        proc.once("spawn", () => {
          if (proc.pid) rememberGroup(proc.pid);
          resolve();
        });
        proc.once("close", (code, signal) => {
          ended = { code, signal };
          if (!closing) transport.onclose?.();
        });
        proc.stdin.on("error", (err) => transport.onerror?.(err));
        proc.stdout.on("data", (chunk: Buffer) => {
          buffer.append(chunk);
          for (;;) {
            let message: JSONRPCMessage | null;
            try {
              message = buffer.readMessage();
            } catch (err) {
              transport.onerror?.(err as Error);
              continue;
            }
            if (message === null) break;
            transport.onmessage?.(message);
          }
        });
        proc.stderr.on("data", (chunk: Buffer) => {
          stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
        });
      });
    },
    send(message) {
      return new Promise<void>((resolve, reject) => {
        const stdin = child?.stdin;
        if (!stdin || stdin.destroyed || ended) return reject(new Error("the server process is not running"));
        if (stdin.write(serializeMessage(message))) resolve();
        else stdin.once("drain", () => resolve());
      });
    },
    async close() {
      if (closing) return;
      closing = true;
      buffer.clear();
      const proc = child;
      if (proc?.pid) {
        proc.stdin.end();
        await stopGroup(proc.pid);
      }
      transport.onclose?.();
    },
  };
  return transport;
}
