/**
 * What the parts below the composition are handed once, at start (app/configure.ts
 * `configureParts`, from settings.ts `startSlices`): each part gets its own slice and reads no
 * environment. Shared here because settings.ts makes them and the parts above it hold them.
 */

/** Workspace snapshots (snapshots/git.ts). */
export interface SnapshotSlice {
  /** MINI_CURSOR_SNAPSHOTS: off turns snapshots (and /undo) off. */
  enabled: boolean;
  /** MINI_CURSOR_SNAPSHOT_WAIT_MS: how long a command step waits for the first snapshot. */
  waitMs: number;
  /** MINI_CURSOR_SNAPSHOT_WATCH: off makes every whole snapshot scan instead of asking the watcher. */
  watch: boolean;
  /** The environment the shadow repository's git runs in: only what finds git and its locale. */
  gitEnvironment: Record<string, string | undefined>;
}

/** Commands' environments when a caller gives none (workspace/processes.ts). */
export interface CommandSlice {
  /** The process's environment as it started, the base a command's is built on. */
  base: Record<string, string | undefined>;
  /** The same without secret-looking variables but those MINI_CURSOR_PASS_ENV passes. */
  scrubbed: Record<string, string | undefined>;
}

/** The person's config files that approvals and trust read (security/rules.ts). */
export interface ConfigFileSlice {
  /** MINI_CURSOR_TRUST_FILE or the user config folder's trusted-configs.json. */
  trustStore: string;
  /** MINI_CURSOR_USER_CONFIG or the user config folder's config.json (its MCP servers and rules). */
  mcpUserConfig: string;
}

export interface StartSlices {
  /** MINI_CURSOR_STATE_HOME, else $XDG_STATE_HOME/mini-cursor, else ~/.local/state/mini-cursor (memory/state-dir.ts). */
  stateHome: string;
  snapshots: SnapshotSlice;
  commands: CommandSlice;
  configFiles: ConfigFileSlice;
  /** MINI_CURSOR_FAULT_POINT, the fault tests' hook (memory/fault-point.ts); unset outside them. */
  faultPoint?: string;
}

/**
 * Where a part keeps the slice it was handed: `set` at start (a test that changes it sets it
 * again), `get` wherever it is read, which fails loudly, naming `what`, when nothing was handed
 * over (a script or test that uses the part without `configureParts`).
 */
export function startSlot<T>(what: string): { set(value: T): void; get(): T } {
  let value: T | undefined;
  return {
    set: (given) => {
      value = given;
    },
    get: () => {
      if (value === undefined)
        throw new Error(`${what} was used before it was handed over at start (app/configure.ts configureParts)`);
      return value;
    },
  };
}
