/**
 * The glob helpers find_files and the tools' declared paths share; what git ignores is
 * ignore.ts's (re-exported here for the walks' importers).
 */
export { createIgnoreChecker } from "./ignore.js";

/** A glob without "/" matches file names at any depth ("*.ts" = "**\/*.ts"), as in .gitignore and ripgrep. */
export function anyDepth(pattern: string): string {
  return pattern.includes("/") ? pattern.replace(/^\.\//, "") : `**/${pattern}`;
}

/** The folder a glob searches: its segments before the first one with a wildcard ("src" for "src/*.ts", "." for "*.md"). */
export function globBase(pattern: string): string {
  const parts = pattern.split("/");
  const first = parts.findIndex((p) => /[*?[{]/.test(p));
  const base = (first === -1 ? parts.slice(0, -1) : parts.slice(0, first)).join("/");
  return base === "" ? "." : base;
}
