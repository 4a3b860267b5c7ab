import { afterEach, beforeEach } from "@jest/globals";
import { processesWith } from "./mcp-servers.js";
import { killPids } from "./pids.js";
import { makeTempDir } from "./tmp.js";

export type TempDir = ReturnType<typeof makeTempDir>;

/**
 * A fresh workspace and home for each test of the file. After each test `close` shuts what the
 * test opened (hubs, scripted providers), then every process whose command line names the home
 * is killed: the tests' MCP servers and CLIs carry it in their arguments, and a failed test must
 * not leave them behind for the next one.
 */
export function useWorkspaceAndHome(close: () => unknown = () => {}): { ws: TempDir; home: TempDir } {
  const dirs = {} as { ws: TempDir; home: TempDir };
  beforeEach(() => {
    dirs.ws = makeTempDir();
    dirs.home = makeTempDir();
  });
  afterEach(async () => {
    await close();
    killPids(processesWith(dirs.home.dir));
    dirs.ws.cleanup();
    dirs.home.cleanup();
  });
  return dirs;
}
