import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import {
  bubblewrapArgs,
  createSandbox,
  detectBubblewrap,
  planSandbox,
  probeBubblewrap,
  SandboxUnavailableError,
  type Sandbox,
} from "../../src/security/sandbox.js";
import { createToolContext, type ToolContext } from "../../src/tools/context.js";
import { executeCommand } from "../../src/tools/execute-command.js";
import { createProcessRegistry } from "../../src/workspace/processes.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { requireBubblewrap } from "../helpers/bubblewrap.js";
import { stateDirOf } from "../helpers/state-dir.js";

/**
 * The sandbox against a real bubblewrap. CI installs it (.ci/run); without it these tests fail
 * with a message saying so rather than skipping. The fake home and the "outside" folder live in
 * /var/tmp, because the sandbox gives commands a private /tmp (a file there proves nothing).
 */

let tmp: ReturnType<typeof makeTempDir>;
let home: string;
let outside: string;
const sandboxes: Sandbox[] = [];
const contexts: ToolContext[] = [];

beforeAll(requireBubblewrap);

beforeEach(() => {
  tmp = makeTempDir();
  home = mkdtempSync("/var/tmp/mini-cursor-home-");
  outside = mkdtempSync("/var/tmp/mini-cursor-outside-");
  mkdirSync(path.join(home, ".ssh"));
  writeFileSync(path.join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
  mkdirSync(path.join(home, ".aws"));
  writeFileSync(path.join(home, ".aws", "credentials"), "aws_secret_access_key = x\n");
  writeFileSync(path.join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=npm_secret\n");
  writeFileSync(path.join(home, ".gitconfig"), "[user]\n  name = me\n");
  writeFileSync(path.join(outside, "keep.txt"), "keep\n");
});

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.processes.stopAll()));
  for (const s of sandboxes.splice(0)) s.dispose();
  tmp.cleanup();
  rmSync(home, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function sandboxed(options: { network?: boolean } = {}): ToolContext & { sandbox: Sandbox } {
  const sandbox = createSandbox({ workspace: tmp.dir, home, network: options.network });
  sandboxes.push(sandbox);
  const ctx = createToolContext(
    { workspace: tmp.dir, spawnSpec: sandbox.spawnSpec, env: { PATH: process.env.PATH, HOME: home, LANG: "C.UTF-8" } },
    createProcessRegistry(),
  );
  contexts.push(ctx);
  return Object.assign(ctx, { sandbox });
}

const run = (ctx: ToolContext, command: string, timeoutMs?: number) => executeCommand(ctx, { command, timeoutMs });

/** Processes whose command line contains `needle` (ours, found through /proc). */
function processesWith(needle: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").includes(needle);
      } catch {
        return false;
      }
    });
}

test("the workspace is writable; the rest of the file system, the home folder included, is not", async () => {
  const ctx = sandboxed();
  const out = await run(
    ctx,
    [
      "echo inside > inside.txt && cat inside.txt",
      `echo pwned > ${outside}/keep.txt`,
      `echo pwned > ${outside}/new.txt`,
      "echo pwned > ~/pwned.txt",
      "touch /usr/pwned",
      'echo "[$MINI_CURSOR_SANDBOX]"',
    ].join("; "),
  );
  expect(out).toBe(
    [
      "Exit code: 0",
      "inside",
      `bash: line 1: ${outside}/keep.txt: Read-only file system`,
      `bash: line 1: ${outside}/new.txt: Read-only file system`,
      `bash: line 1: ${home}/pwned.txt: Read-only file system`,
      "touch: cannot touch '/usr/pwned': Read-only file system",
      "[bubblewrap]",
    ].join("\n"),
  );
  expect(readFileSync(path.join(tmp.dir, "inside.txt"), "utf8")).toBe("inside\n");
  expect(readFileSync(path.join(outside, "keep.txt"), "utf8")).toBe("keep\n");
  expect(readdirSync(outside)).toEqual(["keep.txt"]);
  expect(existsSync(path.join(home, "pwned.txt"))).toBe(false);
});

test("no hard link to a workspace file can be made outside it: every writable place is another mount (EXDEV), the rest read-only", async () => {
  // Same file system as the workspace outside the sandbox: only the mounts keep the links out.
  const dev = statSync(tmp.dir).dev;
  expect([statSync(home).dev, statSync(outside).dev]).toEqual([dev, dev]);
  const ctx = sandboxed();
  const out = await run(
    ctx,
    [
      "echo inside > inside.txt",
      "ln inside.txt ~/.npm/_cacache/link",
      "ln inside.txt /tmp/link",
      `ln inside.txt ${outside}/link`,
      "ln inside.txt ~/link",
      "ln inside.txt inner-link && echo inside-ok",
    ].join("; "),
  );
  expect(out).toBe(
    [
      "Exit code: 0",
      `ln: failed to create hard link '${home}/.npm/_cacache/link' => 'inside.txt': Invalid cross-device link`,
      "ln: failed to create hard link '/tmp/link' => 'inside.txt': Invalid cross-device link",
      `ln: failed to create hard link '${outside}/link': Read-only file system`,
      `ln: failed to create hard link '${home}/link': Read-only file system`,
      "inside-ok",
    ].join("\n"),
  );
  expect(readdirSync(outside)).toEqual(["keep.txt"]);
  expect(statSync(path.join(tmp.dir, "inside.txt")).nlink).toBe(2);
});

test("credentials in the home folder are hidden; other dotfiles are readable", async () => {
  const ctx = sandboxed();
  const out = await run(ctx, "ls -A ~/.ssh ~/.aws; wc -c < ~/.npmrc; cat ~/.ssh/id_ed25519; head -1 ~/.gitconfig");
  expect(out).toBe(
    [
      "Exit code: 0",
      `${home}/.aws:`,
      "",
      `${home}/.ssh:`,
      "0",
      `cat: ${home}/.ssh/id_ed25519: No such file or directory`,
      "[user]",
    ].join("\n"),
  );
  expect(readFileSync(path.join(home, ".ssh", "id_ed25519"), "utf8")).toBe("PRIVATE KEY\n");
});

test("package manager stores stay writable, so installs work (security-caches tests what does not)", async () => {
  mkdirSync(path.join(home, ".cache", "yarn"), { recursive: true });
  const ctx = sandboxed();
  const out = await run(
    ctx,
    "echo cached > ~/.npm/_cacache/probe && echo ok > ~/.cache/yarn/probe && cat ~/.npm/_cacache/probe",
  );
  expect(out).toBe("Exit code: 0\ncached");
  expect(readFileSync(path.join(home, ".npm", "_cacache", "probe"), "utf8")).toBe("cached\n");
  expect(readFileSync(path.join(home, ".cache", "yarn", "probe"), "utf8")).toBe("ok\n");
});

test("/tmp is private to the session: kept between commands, not the host's, gone afterwards", async () => {
  const ctx = sandboxed();
  const name = `mini-cursor-private-${process.pid}`;
  expect(await run(ctx, `echo hidden > /tmp/${name} && ls /tmp`)).toContain(name);
  expect(await run(ctx, `cat /tmp/${name}`)).toBe("Exit code: 0\nhidden");
  expect(existsSync(`/tmp/${name}`)).toBe(false);
  const tmpDirs = () =>
    readdirSync("/tmp").filter(
      (d) => d.startsWith(`mini-cursor-sandbox-${process.pid}-`) && existsSync(`/tmp/${d}/tmp/${name}`),
    );
  expect(tmpDirs()).toHaveLength(1);
  ctx.sandbox.dispose();
  expect(tmpDirs()).toHaveLength(0);
});

test("the private /tmp of a session that died without cleaning up is removed by the next one", async () => {
  // A pid above the kernel's limit (PID_MAX_LIMIT is 4194304), so no process can have it.
  const stale = mkdtempSync("/tmp/mini-cursor-sandbox-4194305-");
  writeFileSync(path.join(stale, "left-over"), "x");
  const mine = mkdtempSync(`/tmp/mini-cursor-sandbox-${process.pid}-`);
  try {
    await run(sandboxed(), "true");
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(mine)).toBe(true);
  } finally {
    rmSync(stale, { recursive: true, force: true });
    rmSync(mine, { recursive: true, force: true });
  }
});

test("the project's rules files cannot be changed from inside", async () => {
  writeFileSync(path.join(tmp.dir, "mini-cursor.config.json"), '{"commands":{"deny":["curl"]}}\n');
  // The folder a repository keeps its rules file in (mini-cursor itself no longer makes it).
  mkdirSync(path.join(tmp.dir, ".mini-cursor"));
  const ctx = sandboxed();
  const out = await run(
    ctx,
    'echo "{}" > mini-cursor.config.json; echo "{}" > .mini-cursor/config.json; rm -f mini-cursor.config.json',
  );
  expect(out).toContain("mini-cursor.config.json: Read-only file system");
  expect(out).toContain(".mini-cursor/config.json: Read-only file system");
  expect(readFileSync(path.join(tmp.dir, "mini-cursor.config.json"), "utf8")).toBe('{"commands":{"deny":["curl"]}}\n');
  expect(existsSync(path.join(tmp.dir, ".mini-cursor", "config.json"))).toBe(false);
});

test("mini-cursor's state folder is read-only inside", async () => {
  const state = stateDirOf(tmp.dir);
  mkdirSync(state, { recursive: true });
  const out = await run(sandboxed(), `echo x > ${JSON.stringify(path.join(state, "threads.json"))}`);
  expect(out).toContain("threads.json: Read-only file system");
  expect(existsSync(path.join(state, "threads.json"))).toBe(false);
});

test("a detached setsid child does not outlive its command", async () => {
  const ctx = sandboxed();
  const marker = `sleep 4242.${process.pid}`;
  expect(await run(ctx, `setsid ${marker} > /dev/null 2>&1 & echo started`)).toBe("Exit code: 0\nstarted");
  await waitFor(() => processesWith(marker).length === 0, 3_000);
  expect(processesWith(marker)).toEqual([]);
});

test("a timeout stops everything in the sandbox, even what ignores SIGTERM", async () => {
  const ctx = sandboxed();
  const marker = `sleep 4343.${process.pid}`;
  const started = Date.now();
  const out = await run(ctx, `trap '' TERM; (setsid ${marker} &); ${marker}`, 500);
  expect(out).toMatch(/^Timed out after 0\.5 s; process group stopped\.\nExit code: 143 \(killed by SIGTERM\)/);
  expect(Date.now() - started).toBeLessThan(5_000);
  await waitFor(() => processesWith(marker).length === 0, 3_000);
});

test("exit codes come through the sandbox", async () => {
  const ctx = sandboxed();
  expect(await run(ctx, "exit 3")).toBe("Exit code: 3\n(no output)");
  expect(await run(ctx, "kill -9 $$")).toBe("Exit code: 137\n(no output)");
  expect(await run(ctx, "no-such-program-xyz")).toMatch(/^Exit code: 127 \(command not found/);
});

async function loopbackServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((socket) => socket.end("hello\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test("network on: a loopback server on the host is reachable", async () => {
  const server = await loopbackServer();
  try {
    const out = await run(sandboxed(), `exec 3<>/dev/tcp/127.0.0.1/${server.port} && cat <&3`);
    expect(out).toBe("Exit code: 0\nhello");
  } finally {
    await server.close();
  }
});

test("--no-network: the same connection is refused", async () => {
  const server = await loopbackServer();
  try {
    const out = await run(sandboxed({ network: false }), `exec 3<>/dev/tcp/127.0.0.1/${server.port} && cat <&3`);
    expect(out).toMatch(/^Exit code: 1\n/);
    expect(out).toContain(`/dev/tcp/127.0.0.1/${server.port}: Connection refused`);
    expect(out).not.toContain("hello");
  } finally {
    await server.close();
  }
});

test("a dev server runs in the background inside the sandbox, is reachable, and is stopped", async () => {
  const ctx = sandboxed();
  const script =
    "require('http').createServer((q, s) => s.end('from the sandbox')).listen(0, '127.0.0.1', function () { console.log('Local: http://127.0.0.1:' + this.address().port + '/') })";
  const out = await run(ctx, `node -e "${script}"`);
  expect(out).toMatch(/^Running in the background as bg-1 \(pid \d+\) at http:\/\/127\.0\.0\.1:\d+\/\./);
  const bg = ctx.processes.get("bg-1")!;
  expect(await (await fetch(bg.url!)).text()).toBe("from the sandbox");
  expect(processesWith("from the sandbox").length).toBeGreaterThan(0);
  await ctx.processes.stopAll();
  expect(bg.running).toBe(false);
  await waitFor(() => processesWith("from the sandbox").length === 0, 3_000);
});

test("the private /tmp is mounted before the workspace, so a workspace under /tmp stays writable", () => {
  const files = { tmpDir: "/var/tmp/x/tmp", emptyFile: "/var/tmp/x/empty" };
  const args = bubblewrapArgs({ workspace: tmp.dir, home, ...files }, tmp.dir);
  const tmpAt = args.findIndex((a, i) => a === "--bind" && args[i + 2] === "/tmp");
  const wsAt = args.findIndex((a, i) => a === "--bind" && args[i + 2] === tmp.dir);
  expect(tmpAt).toBeGreaterThan(-1);
  expect(wsAt).toBeGreaterThan(tmpAt);
  expect(args.slice(0, 3)).toEqual(["--die-with-parent", "--new-session", "--unshare-pid"]);
  expect(args).not.toContain("--unshare-net");
  expect(bubblewrapArgs({ workspace: tmp.dir, home, ...files, network: false }, tmp.dir)).toContain("--unshare-net");
  // Credentials: folders get an empty tmpfs, files an empty read-only file.
  expect(args.join(" ")).toContain(`--tmpfs ${home}/.ssh`);
  expect(args.join(" ")).toContain(`--ro-bind /var/tmp/x/empty ${home}/.npmrc`);
});

test("--sandbox auto|on|off on a machine with and without bubblewrap", () => {
  expect(planSandbox("off", { workspace: tmp.dir })).toEqual({
    summary: "off (--sandbox off): commands can change any file you can",
  });
  const on = planSandbox("auto", { workspace: tmp.dir, network: false });
  expect(on.sandbox).toBeDefined();
  expect(on.summary).toBe("bubblewrap: only the workspace is writable, credentials hidden, network off");
  on.sandbox!.dispose();

  const missing = { workspace: tmp.dir, program: "/nonexistent/bwrap" };
  expect(planSandbox("auto", missing)).toEqual({
    summary:
      "off: bubblewrap (bwrap) is not installed; to turn it on, install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)",
  });
  expect(() => planSandbox("on", missing)).toThrow(SandboxUnavailableError);
  expect(() => planSandbox("on", missing)).toThrow(
    "--sandbox on needs bubblewrap, but bubblewrap (bwrap) is not installed. To use it, install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap).",
  );
});

test("probeBubblewrap answers in the background what detectBubblewrap answers, and fills its cache", async () => {
  expect(await probeBubblewrap(true, "/nonexistent/bwrap")).toEqual({
    available: false,
    problem: "bubblewrap (bwrap) is not installed",
  });
  const refusing = path.join(tmp.dir, "refusing-bwrap");
  writeFileSync(refusing, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", {
    mode: 0o755,
  });
  const pending = probeBubblewrap(false, refusing);
  expect(probeBubblewrap(false, refusing)).toBe(pending);
  const probed = await pending;
  expect(probed).toEqual({
    available: false,
    problem: "bubblewrap is installed but cannot start a sandbox here (bwrap: No permissions to create new namespace)",
  });
  expect(detectBubblewrap(false, refusing)).toBe(probed);
  // The same answer from the synchronous check (another cache key: the network option).
  expect(detectBubblewrap(true, refusing)).toEqual(probed);
  const silent = path.join(tmp.dir, "silent-bwrap");
  writeFileSync(silent, "#!/bin/sh\nexit 3\n", { mode: 0o755 });
  expect(await probeBubblewrap(true, silent)).toEqual(detectBubblewrap(false, silent));
});
