import { MAX_BODY_BYTES } from "../../lib/limits.js";

/** Rejects requests whose declared body is over the limit with 413. */
export async function limitBody(req, res) {
  const length = Number(req.headers["content-length"] ?? 0);
  if (length <= MAX_BODY_BYTES) return true;
  res.writeHead(413).end(`body over ${MAX_BODY_BYTES} bytes`);
  return false;
}
