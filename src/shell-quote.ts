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

/**
 * Splits a line into words as a POSIX shell would, without expanding anything: whitespace
 * separates words, '…' keeps its text as it is, "…" keeps it with \" \\ \$ \` unescaped, and a
 * backslash outside quotes keeps the next character. An unclosed quote runs to the end of the
 * line. The inverse of shellQuote, for arguments a person types (custom slash commands' $1…$9).
 */
export function shellSplit(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  const add = (text: string) => {
    word = (word ?? "") + text;
  };
  while (i < line.length) {
    const ch = line[i]!;
    if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      i++;
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      add(line.slice(i + 1, end === -1 ? line.length : end));
      i = end === -1 ? line.length : end + 1;
    } else if (ch === '"') {
      add("");
      i++;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) {
          add(line[i + 1]!);
          i += 2;
        } else add(line[i++]!);
      }
      i++;
    } else if (ch === "\\" && i + 1 < line.length) {
      add(line[i + 1]!);
      i += 2;
    } else {
      add(ch);
      i++;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
