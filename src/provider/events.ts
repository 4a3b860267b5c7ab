import type { AgentEvent } from "../contracts/events.js";
import type { ProviderNote } from "./message.js";

export type ProviderEvent = Extract<AgentEvent, { type: "thinking" | "notice" }>;

export function providerNoteEvent(note: ProviderNote, step: number): ProviderEvent {
  if (note.kind === "thinking") return { type: "thinking", step, text: note.text };
  return note.kind === "wait"
    ? { type: "notice", step, message: note.text, wait: true }
    : { type: "notice", step, message: note.text };
}
