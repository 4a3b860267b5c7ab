import { gateText } from "../workspace/output-gate.js";

/**
 * Text from the model, from tools, from commands and from MCP servers reaches the terminal only
 * through here, which is the output gate (workspace/output-gate.ts): known secrets and
 * credential-shaped text are masked, and control characters are made visible instead of being
 * obeyed, so a file or a reply cannot move the cursor, erase or repaint lines (an approval
 * question rewritten as `npm test`), set the clipboard (OSC 52) or the window title, ring the
 * bell, or reorder text with bidi overrides. Newlines and tabs are kept.
 */
export function sanitizeForTerminal(text: string): string {
  return gateText(text);
}
