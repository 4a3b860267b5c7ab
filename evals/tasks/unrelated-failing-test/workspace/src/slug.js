/** The URL slug of a post title: lower case, words joined by dashes. */
export function slugify(title) {
  return title.trim().toLowerCase().replace(/\s+/g, "-");
}
