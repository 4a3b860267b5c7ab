import { lstatSync, statSync } from "node:fs";
import type { z } from "zod";
import { isRefusedFile, MAX_CONFIG_BYTES, readRegularTextSync, refusalReason } from "../regular-file.js";

/** How a config file's reader says what is wrong with it (McpConfigError, HooksConfigError, RulesError). */
type ConfigError = new (message: string) => Error;

/**
 * The text of one of the person's config files (missing: undefined), read without blocking: a
 * FIFO in its place is refused with `Failure`, never waited on.
 */
export function readConfigText(file: string, Failure: ConfigError): string | undefined {
  try {
    return readRegularTextSync(file, { follow: true, maxBytes: MAX_CONFIG_BYTES });
  } catch (err) {
    if (isRefusedFile(err)) throw new Failure(`${file} cannot be read: ${refusalReason(err)}`);
    return undefined;
  }
}

/** A config file's JSON in the shape of `schema`; `Failure` says where it is not, naming the file `name`. */
export function parseConfig<T>(text: string, name: string, schema: z.ZodType<T>, Failure: ConfigError): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Failure(`${name} is not valid JSON: ${(err as Error).message}`);
  }
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new Failure(`${name}: ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
}

/**
 * What is at `p`, following symlinks unless `follow` is false (then a link is "link"); undefined
 * when nothing is there or it cannot be looked at.
 */
export function kindAt(p: string, follow = true): "dir" | "file" | "link" | "socket" | "other" | undefined {
  try {
    const st = follow ? statSync(p) : lstatSync(p);
    if (st.isSymbolicLink()) return "link";
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSocket() ? "socket" : "other";
  } catch {
    return undefined;
  }
}
