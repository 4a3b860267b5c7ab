import { summarize } from "./text.js";

/** The feed as plain text, one post a line. */
export function renderFeed(posts) {
  return posts.map(summarize).join("\n");
}
