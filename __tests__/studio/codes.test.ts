import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, jest, test } from "@jest/globals";
import type { Interrupt } from "@langchain/langgraph-sdk";
import { baseEnv, collect, NOBODY, RUNNING_AS_ROOT } from "../helpers/cli.js";
import { startOpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import {
  printedApprovalCodes,
  STUDIO_STARTUP_DEADLINE_MS,
  startStudioServer,
  useStudioServer,
} from "../helpers/studio-server.js";

/**
 * Issue 44 item 7 through the real Studio dev server: the one-time code scrolls away under the
 * request log, so `npm run studio -- codes` in another terminal lists the codes still waiting,
 * from the server itself, over a socket only the person's user can open. Another local user
 * (uid 65534) gets nothing, with the command or by connecting to the socket directly.
 */

jest.setTimeout(STUDIO_STARTUP_DEADLINE_MS + 240_000);

const fx = useStudioServer((request): ScriptStep => {
  const last = request.messages.at(-1);
  if (last?.role === "user") return { toolCalls: [{ name: "execute_command", args: { command: "echo hi > hi.txt" } }] };
  return { content: "done" };
});

const port = () => new URL(fx.studio.apiUrl).port;
/** Where scripts/studio.mjs puts the socket for this user. */
const socketPath = () =>
  path.join(
    process.env.XDG_RUNTIME_DIR
      ? path.join(process.env.XDG_RUNTIME_DIR, "mini-cursor")
      : path.join(os.tmpdir(), `mini-cursor-${process.getuid!()}`),
    `studio-${port()}.sock`,
  );

/** `node scripts/studio.mjs codes --port <port>` (what npm run studio -- codes runs), as this user or `uid`. */
function codesCommand(script: string, uid?: number) {
  const argv = [process.execPath, script, "codes", "--port", port()];
  const child =
    uid === undefined
      ? spawn(argv[0]!, argv.slice(1), { env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] })
      : spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...argv], {
          cwd: "/",
          env: { PATH: process.env.PATH },
          stdio: ["ignore", "pipe", "pipe"],
        });
  return collect(child, 60_000);
}

test("npm run studio -- codes lists the waiting code from another terminal, and none once it is spent", async () => {
  const { client, assistantId, project } = fx.studio;
  expect(fx.studio.output()).toContain(`  Codes   npm run studio -- codes --port ${port()} (in another terminal)\n`);
  const thread = await client.threads.create();
  const first = (await client.runs.wait(thread.thread_id, assistantId, {
    input: { messages: [{ type: "human", content: "write hi" }] },
  })) as { __interrupt__?: Interrupt[] };
  expect(first.__interrupt__).toHaveLength(1);
  const [code] = await printedApprovalCodes(() => fx.studio.output(), thread.thread_id);
  expect(fx.studio.output()).toContain(`  One-time approval code: ${code}\n`);
  expect(fx.studio.output()).toContain(
    "  Scrolled away? npm run studio -- codes, in another terminal, lists the codes still waiting.\n",
  );

  const listed = await codesCommand(path.join(project, "scripts", "studio.mjs"));
  expect(listed.code).toBe(0);
  expect(listed.stdout).toBe(
    `One-time approval codes waiting (1):\n  ${code}  execute_command in thread ${thread.thread_id} (runs a shell command (approval mode auto-edit))\n` +
      'Approve in Studio by resuming with {"decision": "approve", "code": "<code>"}.\n',
  );

  if (RUNNING_AS_ROOT) {
    // Another user, with the same command (from a copy it can read) and straight at the socket.
    const reachable = mkdtempSync("/var/tmp/mc-codes-");
    try {
      chmodSync(reachable, 0o755);
      // The command and the module it imports.
      for (const file of ["studio.mjs", "studio-stale-runs.mjs"])
        copyFileSync(path.join(project, "scripts", file), path.join(reachable, file));
      const theirs = await codesCommand(path.join(reachable, "studio.mjs"), NOBODY);
      expect(theirs.code).toBe(1);
      expect(`${theirs.stdout}${theirs.stderr}`).not.toContain(code!);
      expect(theirs.stderr).toContain("mini-cursor studio: cannot list the approval codes of the server on port");
      const direct = spawn(
        "setpriv",
        [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          "--clear-groups",
          process.execPath,
          "-e",
          'const c = require("node:net").connect(process.argv[1]); let t = ""; c.on("data", (d) => (t += d)); c.on("end", () => console.log("READ " + t)); c.on("error", (e) => console.log("ERROR " + e.code));',
          socketPath(),
        ],
        { cwd: "/", stdio: ["ignore", "pipe", "pipe"] },
      );
      const got = await collect(direct, 30_000);
      expect(got.stdout.trim()).toBe("ERROR EACCES");
    } finally {
      rmSync(reachable, { recursive: true, force: true });
    }
  }

  // Spent: the list is empty.
  const done = (await client.runs.wait(thread.thread_id, assistantId, {
    command: { resume: { decision: "approve", code } },
  })) as { __interrupt__?: Interrupt[] };
  expect(done.__interrupt__).toBeUndefined();
  const after = await codesCommand(path.join(project, "scripts", "studio.mjs"));
  expect(after.stdout).toBe("No call waits for an approval code in this Studio server.\n");
});

test("issue 44 item 3 under Studio: started in mini-cursor's own folder without MINI_CURSOR_WORKSPACE, a run is refused and says how", async () => {
  const model = await startOpenAIServer([{ content: "never" }]);
  const studio = await startStudioServer({
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "test",
    MINI_CURSOR_SANDBOX: "off",
  });
  try {
    const thread = await studio.client.threads.create();
    const run = await studio.client.runs.create(thread.thread_id, studio.assistantId, {
      input: { messages: [{ type: "human", content: "create a React todo app" }] },
    });
    await studio.client.runs.join(thread.thread_id, run.run_id).catch(() => undefined);
    const state = await studio.client.runs.get(thread.thread_id, run.run_id);
    expect(state.status).toBe("error");
    expect(studio.output()).toContain(
      `This Studio server was started in mini-cursor's own folder (${studio.project}) without MINI_CURSOR_WORKSPACE, so a run would work on mini-cursor's own files.`,
    );
    expect(model.requests).toHaveLength(0);
  } finally {
    studio.stop();
    await model.close();
  }
});
