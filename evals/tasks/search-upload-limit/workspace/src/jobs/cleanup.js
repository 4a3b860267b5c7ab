/** Photos older than 10 days in the trash are deleted for good. */
export const TRASH_DAYS = 10;
