/**
 * Elision markers ("// ... existing code ...", "(rest of methods ...)", "[...]") that a model
 * writes instead of code. edit_file writes newString literally, so such a line would replace the
 * code it stands for; it is refused unless the same line was already in oldString.
 */

/** A line inside a block comment: " * text". */
const DOC_LINE = /^\*+\s*(.*?)\s*(?:\*+\/)?$/;
/** A comment-only line in the syntaxes models use, with what the comment says. */
const COMMENT_FORMS: RegExp[] = [
  /^\{\s*\/\*+\s*(.*?)\s*\*+\/\s*\}$/, // {/* ... */} in JSX
  /^\/\*+\s*(.*?)\s*\*+\/$/, // /* ... */
  /^<!--\s*(.*?)\s*-->$/, // <!-- ... -->
  /^\/\/+\s*(.*)$/, // // ...
  /^#+\s*(.*)$/, // # ... (shell, Python, YAML, Ruby)
  /^--+\s*(.*)$/, // -- ... (SQL, Lua, Haskell)
  /^;+\s*(.*)$/, // ; ... (Lisp, INI, assembly)
  /^%+\s*(.*)$/, // % ... (LaTeX, Erlang)
  DOC_LINE,
  /^\/\*+\s*(.*)$/, // /* ... with the close on a later line
  /^(?:rem|')\s+(.*)$/i, // REM ... / ' ... (batch, VB)
];
/** A bare line wrapped in brackets: "(rest of methods ...)", "[...]". */
const BRACKETED = /^[([{]\s*(.*?)\s*[)\]}][,;]?$/;

const ELLIPSIS = /\.\s?\.\s?\.|…/g;
/** An ellipsis that is not a spread ("...rest"). */
const LOOSE_ELLIPSIS = /(?:\.\s?\.\s?\.|…)(?![\w$])/;

/** Words that, next to an ellipsis, mean "code left out". */
const ELIDED_WORDS =
  /\b(?:existing|previous|rest|remaining|remainder|other|others|unchanged|same|more|original|omitted|omit|snip|snipped|truncated|code|content|contents|methods?|functions?|implementation|logic|imports?|styles?|props|fields|properties|tests?|cases|lines|items|elements|components?|routes|handlers|config|etc|here|above|below|before|after|similar|so on|keep|kept)\b/;
const THING =
  "(?:code|file|files|content|contents|implementation|logic|methods?|functions?|class|classes|component|components|module|imports?|exports?|styles?|css|html|markup|tests?|props|properties|fields|routes|handlers|cases|config(?:uration)?|body|section|sections|lines|items|elements|entries|rules|definitions|declarations|text|document|page|script|template|setup|state|hooks|helpers|utils|types|interfaces|schema|queries|endpoints|loop|block|object|array|list|switch|docs|documentation|comments)";
const QUALIFIER =
  "(?:unchanged|remains?(?: the same| unchanged| as (?:is|before))?|stays?(?: the same)?|as (?:before|is|above)|the same|omitted|elided|not shown|untouched|preserved|kept|continues|follows|goes here|here|same as before)";

/** Whole-comment spellings: the comment says nothing but "code left out". */
const WHOLE: RegExp[] = [
  new RegExp(
    `^(?:(?:the|and|keep|keeping|leave|leaving|with|plus) )*(?:the )?(?:rest|remainder) of (?:the |this |your )?(?:[\\w-]+ ){0,2}${THING}(?: ${QUALIFIER})?$`,
  ),
  new RegExp(
    `^(?:(?:keep|keeping|leave|leaving|with|plus|all|the|your) )*(?:existing|previous|original|other|remaining|unchanged|same|old|current) (?:[\\w-]+ ){0,2}${THING}(?: ${QUALIFIER})?$`,
  ),
  new RegExp(`^(?:(?:the|all|other|remaining|existing) )*${THING} ${QUALIFIER}$`),
  /^(?:unchanged|no changes?|same as before|as before|etc|and so on|and more|omitted|snip|snipped|truncated)$/,
];
/** Spellings that mark an elision wherever they appear in a comment. */
const ANYWHERE: RegExp[] = [
  new RegExp(`\\b(?:rest|remainder) of (?:the |this )?(?:[\\w-]+ ){0,2}${THING} (?:is |are )?${QUALIFIER}\\b`),
  new RegExp(
    `\\b(?:existing|previous|original|remaining|unchanged) (?:[\\w-]+ ){0,2}${THING} (?:is |are )?(?:unchanged|remains?|stays?|goes here|omitted|not shown|as before)\\b`,
  ),
  /\b(?:omitted|truncated|elided|shortened|abbreviated) for brevity\b/,
  /\bfor brevity\b/,
  /\b(?:same|unchanged) as (?:before|above|the original)\b/,
];

/** The comment's words, lower-cased, without ellipses and edge punctuation. */
function wordsOf(content: string): string {
  return content
    .toLowerCase()
    .replace(ELLIPSIS, " ")
    .replace(/[()[\]{}*:;,.!"'`<>=-]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** Placeholders are short; a longer comment with an ellipsis in it is prose. */
const MAX_PLACEHOLDER_WORDS = 8;
const MAX_SENTENCE_WORDS = 12;

/**
 * True when a comment's (or bracketed line's) text stands for left-out code. A line of a doc
 * comment ("* ...") is prose or an example far more often than a placeholder, so only the
 * unmistakable spellings count there.
 */
function saysElided(content: string, ellipsisPattern: RegExp, docLine = false): boolean {
  const hasEllipsis = ellipsisPattern.test(content);
  const words = wordsOf(content);
  const count = words === "" ? 0 : words.split(" ").length;
  if (docLine) return count <= MAX_SENTENCE_WORDS && ANYWHERE.slice(0, 2).some((p) => p.test(words));
  if (hasEllipsis && count === 0) return true;
  if (hasEllipsis && count <= MAX_PLACEHOLDER_WORDS && ELIDED_WORDS.test(words)) return true;
  if (WHOLE.some((p) => p.test(words))) return true;
  return count <= MAX_SENTENCE_WORDS && ANYWHERE.some((p) => p.test(words));
}

function placeholderLine(line: string, previous: string | undefined): boolean {
  for (const form of COMMENT_FORMS) {
    const m = form.exec(line);
    if (m) return saysElided(m[1] ?? "", new RegExp(ELLIPSIS.source), form === DOC_LINE);
  }
  const bracketed = BRACKETED.exec(line);
  if (bracketed) {
    const inner = bracketed[1]!;
    // "{...rest}" is a spread; only prose or a loose ellipsis makes it a placeholder.
    if (!LOOSE_ELLIPSIS.test(inner) && !/\s/.test(inner.trim())) return false;
    return saysElided(inner, LOOSE_ELLIPSIS);
  }
  // Code followed by a comment that elides: "return x; // ... rest unchanged".
  const trailing = /\s(?:\/\/+|#|\/\*+)\s*(.*?)\s*(?:\*+\/)?$/.exec(line);
  if (trailing && LOOSE_ELLIPSIS.test(trailing[1]!) && saysElided(trailing[1]!, LOOSE_ELLIPSIS)) return true;
  // A bare line: "...", "… existing code …", "rest of methods ..." (but not "...rest," a spread).
  // Python's `...` is a real statement after a line ending with ":" (an empty body).
  if (/^(?:\.\.\.|…)$/.test(line)) return previous === undefined || !/:\s*(?:#.*)?$/.test(previous);
  if (/^(?:\.\.\.|…)[,;]$/.test(line)) return true; // "...," in a list or object
  const startsWithEllipsis = /^(?:\.\s?\.\s?\.|…)(?:\s|$)/.test(line);
  const endsWithEllipsis = /(?:^|\s|\w)(?:\.\s?\.\s?\.|…)$/.test(line) && /\s/.test(line);
  if (!startsWithEllipsis && !endsWithEllipsis) return false;
  return saysElided(line, LOOSE_ELLIPSIS);
}

const toLf = (s: string) => s.replace(/\r\n/g, "\n");

/**
 * The first placeholder line of `newString` that `oldString` does not already contain, or
 * undefined. Such a line, written literally, would delete the code it stands for.
 */
export function findPlaceholder(newString: string, oldString: string): string | undefined {
  const oldLines = new Set(
    toLf(oldString)
      .split("\n")
      .map((l) => l.trim()),
  );
  let previous: string | undefined;
  for (const raw of toLf(newString).split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (!oldLines.has(line) && placeholderLine(line, previous)) return line;
    previous = line;
  }
  return undefined;
}
