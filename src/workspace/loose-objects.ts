import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { deflate, deflateSync, constants as zlibConstants } from "node:zlib";
import { blobOid } from "./snapshot-direct.js";

/**
 * Blobs and refs written into the snapshot store by this process, as git itself writes them
 * (loose objects: `objects/ab/cdef…`, zlib of "blob <size>\0<bytes>"; loose refs: a file holding
 * the id, moved into place from `<ref>.lock`). For the snapshots taken while the first one runs
 * (snapshot-pending.ts) and a thread's log (snapshots.ts): each `git hash-object` or
 * `git update-ref` they ran cost a process start, about 20 ms here, and an edit step during the
 * first snapshot ran nine of them (issue 30).
 * The file calls are synchronous: a few small ones, where a round trip through the thread pool
 * (busy with the first snapshot's own reads) cost more than the call.
 */

const deflateAsync = promisify(deflate);
/** git's own default for loose objects (core.looseCompression): the fastest. */
const LOOSE_COMPRESSION = zlibConstants.Z_BEST_SPEED;
/** Up to this much is compressed at once, here; more in the thread pool (about 5 ms per MB). */
const SYNC_DEFLATE_BYTES = 256 * 1024;
/** Loose objects are read-only, as git makes them. */
const OBJECT_MODE = 0o444;

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * Writes `data` as a blob into the store at `gitDir` (when not already there) and returns its id.
 * A temporary file in the object's folder is linked into place: a process killed meanwhile leaves
 * at most a `tmp_obj_` file (git's own name for them), never a partial object.
 */
export async function writeLooseBlob(gitDir: string, data: Buffer): Promise<string> {
  const oid = blobOid(data);
  const dir = path.join(gitDir, "objects", oid.slice(0, 2));
  const file = path.join(dir, oid.slice(2));
  if (existsSync(file)) return oid; // stored before (objects never change)
  const raw = Buffer.concat([Buffer.from(`blob ${data.length}\0`), data]);
  const options = { level: LOOSE_COMPRESSION };
  const compressed = raw.length <= SYNC_DEFLATE_BYTES ? deflateSync(raw, options) : await deflateAsync(raw, options);
  mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `tmp_obj_${randomBytes(6).toString("hex")}`);
  try {
    // "wx": made here, never opened when something is there already (nor through a symlink in its place).
    writeFileSync(tmp, compressed, { mode: OBJECT_MODE, flag: "wx" });
    try {
      linkSync(tmp, file);
    } catch (err) {
      // Already there (stored by another process meanwhile): the same bytes. A file system
      // without hard links gets a rename, as git does then.
      if (code(err) !== "EEXIST") renameSync(tmp, file);
    }
  } finally {
    // Also what a full disk left half written.
    rmSync(tmp, { force: true });
  }
  return oid;
}

/**
 * Makes the new ref `ref` (a name no other process writes: it carries this process's id) point
 * at `oid`, by git's own lock protocol: `<ref>.lock` made exclusively, then renamed over the ref.
 */
export function writeLooseRef(gitDir: string, ref: string, oid: string): void {
  const file = path.join(gitDir, ...ref.split("/"));
  mkdirSync(path.dirname(file), { recursive: true });
  const lock = `${file}.lock`;
  writeFileSync(lock, `${oid}\n`, { flag: "wx" });
  try {
    renameSync(lock, file);
  } catch (err) {
    rmSync(lock, { force: true });
    throw err;
  }
}
