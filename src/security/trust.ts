import { createHash } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { readRegularTextSync } from "../regular-file.js";
import path from "node:path";
import { z } from "zod";

/**
 * Trust in a repository's committed rules file. Its `allow` rules and `passEnv` loosen what
 * runs unasked and what secrets commands see, so they apply only once the user has trusted
 * that file's exact content; the answer is kept outside every repository (the trust store,
 * `Settings.trustStore`), by absolute path and SHA-256 of the content, so an edited file asks
 * again. Its `deny` and `ask` rules only tighten and always apply.
 */

const storeSchema = z.object({ trusted: z.record(z.string(), z.string()) });
type Store = z.infer<typeof storeSchema>;

export function contentHash(content: string): string {
  return createHash("sha256").update(content).digest("hex");
}

function readStore(store: string): Store {
  try {
    // Without blocking: a FIFO in its place is refused, never waited on (and nothing is trusted).
    const parsed = storeSchema.safeParse(JSON.parse(readRegularTextSync(store, { follow: true })));
    return parsed.success ? parsed.data : { trusted: {} };
  } catch {
    return { trusted: {} };
  }
}

export function isTrusted(store: string, file: string, hash: string): boolean {
  return readStore(store).trusted[path.resolve(file)] === hash;
}

/** Remembers that the user trusts `file` with this content (written atomically). */
export function trustFile(store: string, file: string, hash: string): void {
  const current = readStore(store);
  current.trusted[path.resolve(file)] = hash;
  mkdirSync(path.dirname(store), { recursive: true });
  const tmp = `${store}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(current, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, store);
}
