import { listNotes } from "./notes.js";

/** "METHOD /path" → the handler that answers it. */
export const routes = {
  "GET /notes": listNotes,
};
