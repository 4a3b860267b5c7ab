import { getUserName } from "./users.js";

export function greet(user) {
  return `Welcome back, ${getUserName(user)}!`;
}
