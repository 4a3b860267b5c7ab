export const ALLOWED_TYPES = ["image/jpeg", "image/png", "image/webp", "image/heic"];
