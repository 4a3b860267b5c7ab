/**
 * The closed choices of a run and their defaults, which settings.ts validates, the flags' help
 * names and the parts that act on them compare against. Here, below all of them, so that none
 * imports settings.ts for a constant.
 */

export const ENGINES = ["graph", "loop"] as const;
/** The engine when neither --engine nor MINI_CURSOR_ENGINE says. */
export const DEFAULT_ENGINE = "graph";
export type EngineName = (typeof ENGINES)[number];

/** auto: bubblewrap when installed; on: refuse to start without it; off: never. */
export const SANDBOX_SETTINGS = ["auto", "on", "off"] as const;
/** bubblewrap when installed, unless --sandbox or MINI_CURSOR_SANDBOX says otherwise. */
export const DEFAULT_SANDBOX = "auto";
export type SandboxSetting = (typeof SANDBOX_SETTINGS)[number];

/** The approval mode when neither --approval nor MINI_CURSOR_APPROVAL says. */
export const DEFAULT_APPROVAL = "auto-edit";

export const DEFAULT_MAX_STEPS = 30;
/** Most model turns one task may take. */
export const MAX_STEPS_LIMIT = 10_000;

/** The embedded checkpointer (MINI_CURSOR_CHECKPOINTER's default); any other value is a PostgreSQL URL. */
export const SQLITE_CHECKPOINTER = "sqlite";
