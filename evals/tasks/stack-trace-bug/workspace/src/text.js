/** Number of words in a text. */
export function wordCount(text) {
  return text.trim().split(/\s+/).length;
}

/** "Title (N words)" for the feed. */
export function summarize(post) {
  return `${post.title} (${wordCount(post.body)} words)`;
}
