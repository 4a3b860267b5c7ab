/** Thumbnails are 10 times smaller than the original, at least 64 px wide. */
export function thumbnailWidth(width) {
  return Math.max(64, Math.round(width / 10));
}
