/**
 * Splits `<think>…</think>` off the start of a streamed answer. DeepSeek-R1 distills, Qwen3 and
 * QwQ on servers without a reasoning parser (Ollama's OpenAI endpoint before 0.9, vLLM without
 * `--reasoning-parser`, llama.cpp with `--reasoning-format none`) send their thinking inside the
 * content; it is thinking for the trace, never part of the answer.
 */
const OPEN = "<think>";
const CLOSE = "</think>";

export interface ThinkSplit {
  text: string;
  thinking: string;
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag` (a tag cut between chunks). */
function partialTagAtEnd(s: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, s.length); k > 0; k--) if (tag.startsWith(s.slice(-k))) return k;
  return 0;
}

export class ThinkSplitter {
  private mode: "start" | "think" | "text" = "start";
  private held = "";
  private trimNext = false;

  push(piece: string): ThinkSplit {
    const out: ThinkSplit = { text: "", thinking: "" };
    let rest = piece;
    while (rest !== "") {
      if (this.mode === "text") {
        if (this.trimNext) {
          rest = rest.trimStart();
          if (rest === "") break;
          this.trimNext = false;
        }
        out.text += rest;
        break;
      }
      this.held += rest;
      rest = "";
      if (this.mode === "start") {
        const lead = this.held.trimStart();
        if (lead.startsWith(OPEN)) {
          this.mode = "think";
          rest = lead.slice(OPEN.length);
          this.held = "";
        } else if (!OPEN.startsWith(lead)) {
          this.mode = "text";
          rest = this.held;
          this.held = "";
        }
        continue;
      }
      // think
      const end = this.held.indexOf(CLOSE);
      if (end >= 0) {
        out.thinking += this.held.slice(0, end);
        rest = this.held.slice(end + CLOSE.length);
        this.held = "";
        this.mode = "text";
        this.trimNext = true;
      } else {
        const keep = partialTagAtEnd(this.held, CLOSE);
        out.thinking += this.held.slice(0, this.held.length - keep);
        this.held = this.held.slice(this.held.length - keep);
      }
    }
    return out;
  }

  /** At the end of the answer: what was held back waiting for a tag. */
  flush(): ThinkSplit {
    const held = this.held;
    this.held = "";
    if (this.mode === "think") return { text: "", thinking: held };
    if (this.mode === "start") this.mode = "text";
    return { text: held, thinking: "" };
  }
}

/** The same split on a whole answer (recorded or non-streamed messages). */
export function stripThink(text: string): ThinkSplit {
  const splitter = new ThinkSplitter();
  const a = splitter.push(text);
  const b = splitter.flush();
  return { text: a.text + b.text, thinking: a.thinking + b.thinking };
}
