import { StringDecoder } from "node:string_decoder";

/**
 * Pasting several lines at the prompt (issue 31). The prompt turns on the terminal's bracketed
 * paste mode, so a paste arrives between two markers instead of as lines each ending in Enter;
 * the line editor gets a placeholder for it, and the request gets the whole text when sent.
 */

/** Asks the terminal to mark pastes (xterm's mode 2004; terminals without it ignore the request). */
export const BRACKETED_PASTE_ON = "\x1b[?2004h";
export const BRACKETED_PASTE_OFF = "\x1b[?2004l";
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** Pasted blocks by their placeholder, for the whole session (a recalled line still expands). */
export class PasteStore {
  private readonly blocks = new Map<string, string>();

  /**
   * What the line editor shows for a paste: a one-line paste as its text (controls removed), a
   * longer one as `[pasted text #1: 12 lines]`.
   */
  placeholder(pasted: string): string {
    const text = pasted.replace(/\r\n?/g, "\n").replace(/\n+$/, "");
    if (!text.includes("\n")) return text.replace(/\t/g, "  ").replace(/[\x00-\x1f\x7f]/g, "");
    const lines = text.split("\n").length;
    const label = `[pasted text #${this.blocks.size + 1}: ${lines} lines]`;
    this.blocks.set(label, text);
    return label;
  }

  /** The line as sent: every placeholder still in it replaced by its text. */
  expand(line: string): string {
    let out = line;
    for (const [label, text] of this.blocks) out = out.split(label).join(text);
    return out;
  }
}

/** How many characters at the end of `text` begin `marker` (they may be completed by the next read). */
function partialMarker(text: string, marker: string): number {
  for (let k = Math.min(marker.length - 1, text.length); k >= 2; k--) {
    if (marker.startsWith(text.slice(-k))) return k;
  }
  return 0;
}

/**
 * Splits what the terminal sends into typed keys (passed on as they are) and pasted blocks
 * (passed on as `onPaste` says). Markers split across reads are held until the next one.
 */
export class PasteFilter {
  private readonly decoder = new StringDecoder("utf8");
  private pasting = false;
  private pasted = "";
  private held = "";

  constructor(private readonly onPaste: (text: string) => string) {}

  /** The text for the line editor from one read of the terminal. */
  feed(chunk: Buffer | string): string {
    let rest = this.held + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    this.held = "";
    let out = "";
    while (rest.length > 0) {
      const marker = this.pasting ? PASTE_END : PASTE_START;
      const at = rest.indexOf(marker);
      if (at < 0) {
        const keep = partialMarker(rest, marker);
        const body = rest.slice(0, rest.length - keep);
        if (this.pasting) this.pasted += body;
        else out += body;
        this.held = rest.slice(rest.length - keep);
        break;
      }
      if (this.pasting) {
        this.pasted += rest.slice(0, at);
        out += this.onPaste(this.pasted);
        this.pasted = "";
      } else out += rest.slice(0, at);
      this.pasting = !this.pasting;
      rest = rest.slice(at + marker.length);
    }
    return out;
  }
}
