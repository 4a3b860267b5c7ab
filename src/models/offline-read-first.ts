import { randomUUID } from "node:crypto";
import { AIMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";

/**
 * The offline model recovers from write_file's read-first refusal as a real model does (issue 44
 * item 4): "create a file a.txt with content …" when a.txt exists is refused until the
 * conversation has read it, so the model reads it and writes again, once. A second refusal (the
 * file changed again in between) is reported, never retried in a loop.
 */

/** The sentence write_file's refusal ends with (tools/write-file.ts): read the file, then write. */
const READ_FIRST = /\bRead it (?:again )?with read_file first\b/;

interface Round {
  turn: AIMessage;
  results: ToolMessage[];
}

/** The model turns since the request, each with the results of its calls. */
function rounds(after: readonly BaseMessage[]): Round[] {
  const out: Round[] = [];
  for (const m of after) {
    if (AIMessage.isInstance(m) && m.tool_calls?.length) out.push({ turn: m, results: [] });
    else if (ToolMessage.isInstance(m)) out.at(-1)?.results.push(m);
  }
  return out;
}

const text = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));
const onlyCall = (round: Round | undefined): ToolCall | undefined =>
  round?.turn.tool_calls?.length === 1 ? round.turn.tool_calls[0] : undefined;

/** The write_file call of a round that write_file refused until the file is read, if that is what happened. */
function refusedWrite(round: Round | undefined): ToolCall | undefined {
  const call = onlyCall(round);
  const result = round?.results.find((r) => r.tool_call_id === call?.id);
  if (call?.name !== "write_file" || !result || result.status !== "error") return undefined;
  return READ_FIRST.test(text(result)) ? call : undefined;
}

/** A call the offline model makes, with an id of its own. */
export function toolCall(name: string, args: Record<string, unknown>): ToolCall {
  return { id: `offline_${randomUUID()}`, name, args, type: "tool_call" };
}

/**
 * The next turn of the recovery, if one is due: read the file write_file refused to replace,
 * then write it again with the same content. Undefined otherwise.
 */
export function readFirstTurn(after: readonly BaseMessage[], zh: boolean): AIMessage | undefined {
  const all = rounds(after);
  const last = all.at(-1);
  const refused = refusedWrite(last);
  const path = String(refused?.args.filePath ?? "");
  // Refused once: read it (a second refusal, after a read, is reported instead).
  if (refused && all.filter((r) => onlyCall(r)?.name === "read_file").length === 0) {
    return new AIMessage({
      content: zh
        ? `${path} 已经存在，write_file 要求先读过它：先读取它，再替换。`
        : `${path} already exists, and write_file replaces only a file this conversation has read: reading it first.`,
      tool_calls: [toolCall("read_file", { filePath: refused.args.filePath })],
    });
  }
  // Read after the refusal, and the read worked: write it again.
  const read = onlyCall(last);
  const before = refusedWrite(all.at(-2));
  const readResult = last?.results.find((r) => r.tool_call_id === read?.id);
  if (
    read?.name === "read_file" &&
    before &&
    read.args.filePath === before.args.filePath &&
    readResult?.status !== "error"
  ) {
    return new AIMessage({
      content: zh ? `已读取 ${path}，现在替换它。` : `Read ${String(before.args.filePath)}; now replacing it.`,
      tool_calls: [toolCall("write_file", before.args)],
    });
  }
  return undefined;
}

/**
 * After a recovery, the results the answer reports: only the last write's, with a sentence on
 * how it got there. Undefined when no recovery happened.
 */
export function afterReadFirst(
  after: readonly BaseMessage[],
  zh: boolean,
): { results: ToolMessage[]; note: string } | undefined {
  const all = rounds(after);
  const last = all.at(-1);
  const call = onlyCall(last);
  if (all.length < 3 || call?.name !== "write_file" || !refusedWrite(all.at(-3))) return undefined;
  if (onlyCall(all.at(-2))?.name !== "read_file") return undefined;
  const path = String(call.args.filePath ?? "");
  return {
    results: last!.results,
    note: zh
      ? `${path} 已经存在，所以先读取了它，然后替换：`
      : `${path} already existed, so I read it first and then replaced it:`,
  };
}
