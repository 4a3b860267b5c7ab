import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { scrubEnvironment } from "../../src/security/env.js";
import { bubblewrapArgs, createSandbox, detectBubblewrap, type Sandbox } from "../../src/security/sandbox.js";
import { createToolContext, type ToolContext } from "../../src/tools/context.js";
import { executeCommand } from "../../src/tools/execute-command.js";
import { createProcessRegistry } from "../../src/workspace/processes.js";

/**
 * Attack: a command reaches the host's Unix sockets, which no network namespace hides — the
 * ssh-agent ($SSH_AUTH_SOCK), the user's runtime folder (D-Bus session bus, systemd --user)
 * and system sockets under /run (docker). Real socket servers listen; a Python client in the
 * sandbox tries each one.
 */

const isRoot = process.getuid?.() === 0;
let base: string;
let workspace: string;
let runtimeDir: string;
let agentSock: string;
let runSock: string;
const servers: net.Server[] = [];
const sandboxes: Sandbox[] = [];
const contexts: ToolContext[] = [];

const PROBE = (paths: Record<string, string>) =>
  `python3 -c '
import socket, sys
for name, p in ${JSON.stringify(Object.entries(paths))}:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print(name + ":" + s.recv(10).decode())
    except OSError as e:
        print(name + ":refused")
'`;

async function listen(p: string): Promise<void> {
  const server = net.createServer((c) => c.end("HELLO"));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(p, resolve));
  chmodSync(p, 0o777);
}

beforeAll(() => {
  const status = detectBubblewrap(false);
  if (!status.available)
    throw new Error(`These tests need bubblewrap, but ${status.problem}. Install it: apt-get install -y bubblewrap`);
});

beforeEach(async () => {
  base = mkdtempSync("/var/tmp/mini-cursor-sockets-");
  chmodSync(base, 0o755);
  workspace = path.join(base, "ws");
  runtimeDir = path.join(base, "runtime");
  for (const d of [workspace, runtimeDir, path.join(base, "agent")]) mkdirSync(d, { mode: 0o777 });
  chmodSync(workspace, 0o777);
  agentSock = path.join(base, "agent", "agent.sock");
  await listen(agentSock);
  await listen(path.join(runtimeDir, "bus"));
  runSock = isRoot ? `/run/mini-cursor-test-${randomBytes(4).toString("hex")}.sock` : "";
  if (runSock) await listen(runSock);
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.processes.stopAll()));
  for (const s of sandboxes.splice(0)) s.dispose();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  rmSync(base, { recursive: true, force: true });
});

/** Runs a program to its end without blocking the event loop (the socket servers live in it). */
function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = { PATH: process.env.PATH },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("close", () => resolve({ stdout, stderr }));
  });
}

const targets = () => ({ agent: agentSock, bus: path.join(runtimeDir, "bus"), ...(runSock ? { run: runSock } : {}) });

async function probe(options: { network: boolean; keepSshAgent?: boolean }): Promise<string> {
  const sandbox = createSandbox({ workspace, home: base, runtimeDir, sshAuthSock: agentSock, ...options });
  sandboxes.push(sandbox);
  const ctx = createToolContext(
    { workspace, spawnSpec: sandbox.spawnSpec, env: { PATH: process.env.PATH } },
    createProcessRegistry(),
  );
  contexts.push(ctx);
  return executeCommand(ctx, { command: PROBE(targets()) });
}

it("the sockets are reachable without the sandbox (the probe works)", async () => {
  const { stdout } = await run("bash", ["-c", PROBE(targets())]);
  expect(stdout).toContain("agent:HELLO");
  expect(stdout).toContain("bus:HELLO");
  if (runSock) expect(stdout).toContain("run:HELLO");
});

it("--no-network: the ssh-agent, the runtime folder and /run are hidden", async () => {
  const out = await probe({ network: false });
  expect(out).toContain("agent:refused");
  expect(out).toContain("bus:refused");
  if (runSock) expect(out).toContain("run:refused");
  expect(out).not.toContain("HELLO");
});

it("with network: the ssh-agent and the runtime folder are still hidden", async () => {
  const out = await probe({ network: true });
  expect(out).toContain("agent:refused");
  expect(out).toContain("bus:refused");
});

it("SSH_AUTH_SOCK is scrubbed unless passed through, and then its socket stays reachable", async () => {
  expect(scrubEnvironment({ SSH_AUTH_SOCK: agentSock, PATH: "/bin" }).env).toEqual({ PATH: "/bin" });
  expect(scrubEnvironment({ SSH_AUTH_SOCK: agentSock }, ["SSH_AUTH_SOCK"]).env).toEqual({ SSH_AUTH_SOCK: agentSock });
  const out = await probe({ network: false, keepSshAgent: true });
  expect(out).toContain("agent:HELLO");
  expect(out).toContain("bus:refused");
});

(isRoot ? it : it.skip)("as an ordinary user (nobody), --no-network hides the same sockets", async () => {
  const tmpDir = path.join(base, "sandbox-tmp");
  mkdirSync(tmpDir);
  chmodSync(tmpDir, 0o1777);
  const emptyFile = path.join(base, "empty");
  writeFileSync(emptyFile, "", { mode: 0o444 });
  const args = bubblewrapArgs(
    { workspace, home: base, tmpDir, emptyFile, network: false, runtimeDir, sshAuthSock: agentSock },
    workspace,
  );
  const out = await run("setpriv", [
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "bwrap",
    ...args,
    "--",
    "bash",
    "-c",
    PROBE(targets()),
  ]);
  expect(out.stderr).toBe("");
  expect(out.stdout).toContain("agent:refused");
  expect(out.stdout).toContain("bus:refused");
  expect(out.stdout).toContain("run:refused");
});
