/**
 * Turns a post title into the slug used in its URL.
 * See test/slugify.test.js for the exact rules.
 */
export function slugify(title) {
  throw new Error("slugify is not implemented yet");
}
