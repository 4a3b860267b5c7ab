import { realpathSync } from "node:fs";
import { MAX_CONFIG_BYTES, readRegularTextSync } from "../regular-file.js";
import os from "node:os";
import path from "node:path";
import type { CacheSettings } from "../contracts/host.js";

/**
 * Which folders stay writable in the sandbox so package installs work: the package managers'
 * *stores* (content they download and verify against lockfile hashes), at the places the user
 * really configured — never folders of programs that later run outside the sandbox
 * (~/.bun/bin, ~/.npm/_npx, pnpm's home with its global bin, ~/.cache/corepack, nvm's node
 * downloads, playwright's browsers), and never a whole ~/.cache.
 */

/** `cache=` from an npmrc (the user's), with `~` and ${VAR} left alone if present. */
function npmrcCache(file: string, home: string): string | undefined {
  let text: string;
  try {
    text = readRegularTextSync(file, { follow: true, maxBytes: MAX_CONFIG_BYTES });
  } catch {
    return undefined;
  }
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*cache\s*=\s*(.+?)\s*$/.exec(line);
    if (m && !m[1]!.includes("${"))
      return m[1]!.startsWith("~/") ? path.join(home, m[1]!.slice(2)) : path.resolve(home, m[1]!);
  }
  return undefined;
}

/** The path with symlinks resolved, or as given when it does not exist. */
export function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Folders to keep writable (absolute, symlinks resolved where they exist). `create` lists the
 * ones worth creating when missing (npm fails on a read-only cache it cannot create).
 */
export function writableCaches(
  home: string = os.homedir(),
  settings: CacheSettings = {},
): { writable: string[]; create: string[]; scratch: string[] } {
  const cacheHome = settings.xdgCacheHome ?? path.join(home, ".cache");
  const dataHome = settings.xdgDataHome ?? path.join(home, ".local", "share");
  const npmCache =
    settings.npmCache ??
    npmrcCache(settings.npmUserConfig ?? path.join(home, ".npmrc"), home) ??
    path.join(home, ".npm");
  const npm = [path.join(npmCache, "_cacache"), path.join(npmCache, "_logs")];
  const stores = [
    ...npm,
    settings.yarnCache ?? path.join(cacheHome, "yarn"),
    path.join(home, ".yarn", "berry", "cache"),
    settings.pnpmStore ?? path.join(dataHome, "pnpm", "store"),
    path.join(home, ".pnpm-store"),
    path.join(cacheHome, "pnpm"),
    settings.bunCache ?? path.join(home, ".bun", "install", "cache"),
    path.join(cacheHome, "pip"),
    path.join(cacheHome, "go-build"),
    path.join(cacheHome, "deno"),
    path.join(home, ".cargo", "registry"),
    path.join(home, ".cargo", "git"),
    path.join(home, "go", "pkg", "mod"),
    path.join(home, ".m2", "repository"),
    path.join(home, ".gradle", "caches"),
    ...(settings.extraWritable ?? []).map((p) => path.resolve(home, p)),
  ];
  // npx (`npm create vite`, `npx tsc`) must install into <cache>/_npx, but what it installs there
  // runs later outside the sandbox: it gets an empty folder that lives only as long as the command.
  const scratch = [path.join(npmCache, "_npx")];
  return { writable: [...new Set(stores.map(realOr))], create: npm, scratch: scratch.map(realOr) };
}

/** Lines of an npmrc / yarnrc that hold credentials (tokens, passwords, client keys). */
const CREDENTIAL_LINE =
  /(_auth|_authToken|_password|password|username|npmAuthToken|npmAuthIdent|keyfile|certfile|token)\s*[=:]/i;

/** The config file without its credential lines: registry, cafile, proxy and the rest stay. */
export function withoutCredentials(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !CREDENTIAL_LINE.test(line))
    .join("\n");
}
