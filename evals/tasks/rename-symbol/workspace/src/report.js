import { getUserName, isAdmin } from "./users.js";

/** One line per user, admins marked with a star. */
export function teamReport(users) {
  return users.map((u) => `${isAdmin(u) ? "*" : "-"} ${getUserName(u)}`).join("\n");
}
