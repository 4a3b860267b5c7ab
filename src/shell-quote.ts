/** Words a POSIX shell takes as they are; anything else is single-quoted. */
const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

/**
 * One argument quoted for bash/zsh/sh, so a printed hint can be pasted as it is. Top level (no
 * imports) because hints in every layer use it: memory's errors as well as the UI's.
 */
export function shellQuote(arg: string): string {
  if (arg !== "" && SHELL_SAFE.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
