import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach } from "@jest/globals";
import type { OpenAIServer } from "./openai-server.js";
import type { TempDir } from "./server-home.js";
import { makeTempDir } from "./tmp.js";
import { killGroup, killMarked, uniqueMarker } from "./tmux.js";

/** What the session tests' workspace holds: one file the offline model can read. */
export const HELLO_TEXT = "hello from the workspace\n";

/** Writes hello.txt (HELLO_TEXT) in `dir`. */
export function writeHello(dir: string): void {
  writeFileSync(path.join(dir, "hello.txt"), HELLO_TEXT);
}

/**
 * What a session or signal test opens (the CLI as a child with stdin, no terminal): a workspace
 * with hello.txt and a fresh marker for the commands it starts, made before each test, and the
 * children it tracks and the scripted provider it sets. After each test every tracked child's
 * whole group is killed (even when its leader is gone: what is left in it is what must not
 * leak), then every process carrying the marker; the provider is closed and the dir removed.
 */
export interface SessionFixture {
  tmp: TempDir;
  marker: string;
  server?: OpenAIServer;
  /** Kills `child`'s process group after the test; returns it. */
  track(child: ChildProcess): ChildProcess;
}

export function useSessionFixture(): SessionFixture {
  const started: ChildProcess[] = [];
  const fx = {
    track(child: ChildProcess) {
      started.push(child);
      return child;
    },
  } as SessionFixture;
  beforeEach(() => {
    fx.tmp = makeTempDir();
    fx.marker = uniqueMarker();
    writeHello(fx.tmp.dir);
  });
  afterEach(async () => {
    for (const child of started.splice(0)) killGroup(child.pid);
    killMarked(fx.marker);
    await fx.server?.close();
    fx.server = undefined;
    fx.tmp.cleanup();
  });
  return fx;
}
