import type { AgentEvent } from "../agent/events.js";
import type { ProviderNote } from "./message.js";

export type ProviderEvent = Extract<AgentEvent, { type: "thinking" | "notice" }>;

export function providerNoteEvent(note: ProviderNote, step: number): ProviderEvent {
  return note.kind === "thinking"
    ? { type: "thinking", step, text: note.text }
    : { type: "notice", step, message: note.text };
}
