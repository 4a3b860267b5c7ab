import type { BaseMessage } from "@langchain/core/messages";
import { callJournal, turnOf } from "../../src/agent/tool-journal-step.js";
import type { ToolJournal } from "../../src/memory/tool-journal.js";

/** The journal as a step leaves it when `calls` of the conversation's last turn have started (as the journal guard records them). */
export async function journalStarted(input: {
  journal: ToolJournal;
  threadId: string;
  messages: readonly BaseMessage[];
  calls: ReadonlyArray<{ id?: string; name: string; readOnly?: boolean }>;
  edits?: Record<string, Record<string, unknown>>;
}): Promise<void> {
  const journal = callJournal(input.journal)!;
  for (const c of input.calls)
    await journal.started(input.threadId, turnOf(input.messages), {
      id: c.id ?? "",
      name: c.name,
      ...(c.readOnly ? { readOnly: true } : {}),
      ...(input.edits?.[c.id ?? ""] ? { editedArgs: input.edits[c.id ?? ""] } : {}),
    });
}
