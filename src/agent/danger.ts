/**
 * A first, conservative list of commands that always ask, whatever the approval mode.
 * Word matching is easy to fool; issue 6/8 replaces this with a real shell parser.
 */

interface DangerRule {
  pattern: RegExp;
  reason: string;
}

/** Targets a recursive delete must never touch without asking: home, root, system paths, anything outside. */
const RISKY_TARGET = String.raw`(~|\$HOME|/(\s|$|\*)|/(etc|usr|bin|sbin|lib|lib64|boot|var|opt|root|home|dev|proc|sys)\b|\.\.)`;

const RULES: DangerRule[] = [
  {
    pattern: new RegExp(String.raw`\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b[^;&|]*\s${RISKY_TARGET}`),
    reason: "recursive delete of the home folder, the root, a system path or something outside the workspace",
  },
  {
    pattern: new RegExp(String.raw`\brm\s+[^;&|]*(-[a-zA-Z]*[rR]|--recursive)[^;&|]*\s${RISKY_TARGET}`),
    reason: "recursive delete of the home folder, the root, a system path or something outside the workspace",
  },
  { pattern: /\bgit\s+reset\s+[^;&|]*--hard\b/, reason: "git reset --hard discards uncommitted work" },
  { pattern: /\bgit\s+clean\s+[^;&|]*-[a-zA-Z]*f/, reason: "git clean -f deletes untracked files" },
  { pattern: /\bgit\s+push\s+[^;&|]*(--force\b|-f\b|--force-with-lease\b)/, reason: "git push --force rewrites remote history" },
  { pattern: /(^|[;&|(\s])sudo\b/, reason: "sudo runs with administrator rights" },
  { pattern: /\bmkfs(\.\w+)?\b/, reason: "mkfs formats a file system" },
  { pattern: /\bdd\s+[^;&|]*\bof=/, reason: "dd of= overwrites a file or device" },
  {
    pattern: /\b(chmod|chown|chgrp)\s+[^;&|]*(-[a-zA-Z]*R|--recursive)[^;&|]*\s(\/|~)/,
    reason: "recursive permission change on a system path or the home folder",
  },
  {
    pattern: /\b(curl|wget)\b[^;&]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b/,
    reason: "piping a download into a shell runs code nobody has read",
  },
  { pattern: /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:/, reason: "a fork bomb" },
  { pattern: />\s*\/dev\/(sd|nvme|hd)/, reason: "writing to a raw disk device" },
];

/** The reason a command is dangerous, or null. */
export function dangerReason(command: string): string | null {
  for (const rule of RULES) if (rule.pattern.test(command)) return rule.reason;
  return null;
}
