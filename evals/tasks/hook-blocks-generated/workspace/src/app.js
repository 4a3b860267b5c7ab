import { farewell, greeting } from "./generated/messages.js";

export function greet(name) {
  return `${greeting}, ${name}!`;
}

export function leave(name) {
  return `${farewell}, ${name}.`;
}
