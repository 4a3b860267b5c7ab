import { gateText } from "../workspace/output-gate.js";

/**
 * The output gate (workspace/output-gate.ts) for terminal text: known secrets and
 * credential-shaped text are masked, and control characters are made visible instead of being
 * obeyed, so a file or a reply cannot move the cursor, erase or repaint lines (an approval
 * question rewritten as `npm test`), set the clipboard (OSC 52) or the window title, ring the
 * bell, hide text with zero-width characters or reorder it with bidi marks. ui/output.ts applies
 * it to everything it prints; these are for text that is built first and printed later.
 */

/** Text of several lines: its newlines and tabs are kept. */
export function sanitizeForTerminal(text: string): string {
  return gateText(text);
}

/** Text that is one line on the screen (a label, a name, a description): its line breaks show as `^J`. */
export function sanitizeLine(text: string): string {
  return gateText(text, { lineBreaks: true });
}

/**
 * Whether text is one line the gate leaves as it is: no control or format character, no line
 * break, nothing masked. Only such text may be shown raw (the prompt line's text to edit).
 */
export function isPlainLine(text: string): boolean {
  return sanitizeLine(text) === text;
}
