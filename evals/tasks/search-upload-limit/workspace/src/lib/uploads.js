import { ALLOWED_TYPES } from "./mime.js";

/** Uploads larger than this are refused. */
export const MAX_UPLOAD_SIZE = 10 * 1024 * 1024;

/** Why an upload is refused, or undefined when it is fine. */
export function checkUpload({ type, size }) {
  if (!ALLOWED_TYPES.includes(type)) return `type ${type} is not allowed`;
  if (size > MAX_UPLOAD_SIZE) return `file is larger than ${MAX_UPLOAD_SIZE / 1024 / 1024} MB`;
  return undefined;
}
