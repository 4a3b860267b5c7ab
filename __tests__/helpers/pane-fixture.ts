import { afterEach, beforeAll, beforeEach } from "@jest/globals";
import type { OpenAIServer } from "./openai-server.js";
import type { TempDir } from "./server-home.js";
import { makeTempDir } from "./tmp.js";
import { killMarked, requireTmux, uniqueMarker, type TmuxTerminal } from "./tmux.js";

/**
 * What a pseudo-terminal test opens: a temp dir made before each test (then `prepare`d), a fresh
 * marker for the commands it starts, and the tmux terminal and scripted provider the test sets as
 * it starts them. After each test the terminal is killed, every process carrying the marker too,
 * and the provider closed, even when the test failed, and the dir removed.
 */
export interface PaneFixture {
  tmp: TempDir;
  marker: string;
  term?: TmuxTerminal;
  server?: OpenAIServer;
}

export function usePaneFixture(prepare: (dir: string) => void = () => {}): PaneFixture {
  const fx = {} as PaneFixture;
  beforeAll(() => requireTmux());
  beforeEach(() => {
    fx.tmp = makeTempDir();
    fx.marker = uniqueMarker();
    prepare(fx.tmp.dir);
  });
  afterEach(async () => {
    await fx.term?.kill();
    fx.term = undefined;
    killMarked(fx.marker);
    await fx.server?.close();
    fx.server = undefined;
    fx.tmp.cleanup();
  });
  return fx;
}
