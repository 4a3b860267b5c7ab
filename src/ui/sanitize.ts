/**
 * Text from the model, from tools and from commands reaches the terminal only through here:
 * control characters are made visible instead of being obeyed, so a file or a reply cannot move
 * the cursor, erase or repaint lines (an approval question rewritten as `npm test`), set the
 * clipboard (OSC 52) or the window title, ring the bell, or reorder text with bidi overrides.
 * Newlines and tabs are kept.
 */

/** C0 controls but \t and \n, DEL, C1 controls, and the Unicode bidi embedding/override/isolate marks. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`; // ESC → ^[, BEL → ^G, CR → ^M
  if (code === 0x7f) return "^?";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

export function sanitizeForTerminal(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(CONTROL, visible);
}
