/** What tools say about names they cannot open (their failures: guard/failure.ts). */

/** Why a file whose name is not UTF-8 cannot be opened by a tool: every tool takes names as UTF-8 text. */
export const NOT_UTF8_NAME = "name is not valid UTF-8";

/** Whether `err` is the ENOENT of a name read from a folder with U+FFFD in it: its real name was not UTF-8. */
export function isNotUtf8Name(err: unknown, name: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "ENOENT" && name.includes("\uFFFD");
}
