import { createInterface } from "node:readline/promises";
import type { ApprovalRequest, ApprovalResponse, Approver } from "../contracts/events.js";
import { UNATTENDED_RESPONSE } from "../policy/approval.js";
import { LOCAL_RULES_FILE } from "../security/rules.js";
import { editableText, editInEditor, readEdit } from "./call-editor.js";
import { diffLines, formatArgs } from "./render.js";
import { block, type Piece, print, render } from "./output.js";
import { trackQuestion } from "./questions.js";
import { isPlainLine, sanitizeForTerminal } from "./sanitize.js";
import { fitQuestion } from "./text-width.js";

/** Width the command in a question is wrapped to (it is shown whole, never cut). */
export const QUESTION_WIDTH = 100;

/**
 * Maps what a person typed to a decision; anything that is not one of the offered letters is
 * feedback (a denial with a reason). "always" answers are only accepted where they are offered
 * (undefined: ask again). "edit": the person wants to change the call first (the approver then
 * opens it for editing).
 */
export function parseApprovalAnswer(
  answer: string,
  request?: Pick<ApprovalRequest, "asksEveryTime" | "alwaysRules">,
): ApprovalResponse | "edit" | undefined {
  const text = answer.trim();
  if (text === "") return undefined;
  const lower = text.toLowerCase();
  if (["y", "yes", "是", "好"].includes(lower)) return { decision: "approve" };
  if (["n", "no", "否", "不"].includes(lower)) return { decision: "deny" };
  if (["e", "edit"].includes(lower)) return "edit";
  if (["a", "always"].includes(lower)) return request?.asksEveryTime ? undefined : { decision: "always" };
  if (["p", "project"].includes(lower))
    return request?.asksEveryTime || !request?.alwaysRules?.length ? undefined : { decision: "always-project" };
  return { decision: "deny", feedback: text };
}

/**
 * Splits text into lines of at most `width` characters, keeping its own line breaks, broken after
 * a space where there is one in the line (the space stays, so the lines joined are the text),
 * else where the width ends.
 */
export function wrapText(text: string, width = QUESTION_WIDTH): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0) out.push("");
    let rest = line;
    while (rest.length > 0) {
      if (rest.length <= width) {
        out.push(rest);
        break;
      }
      const space = rest.lastIndexOf(" ", width - 1);
      const cut = space > 0 ? space + 1 : width;
      out.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
  }
  return out;
}

/**
 * The question as pieces (ui/output.ts gates them): the whole command (wrapped, control
 * characters made visible), why, and the choices. Names, the sub-agent's label and the reason are
 * one line each, so none of them can start a line that looks like another question. With the
 * terminal's `columns`, a command wraps within it (formatQuestion fits the rest).
 */
function questionPieces(request: ApprovalRequest, columns?: number): { text: Piece[]; prompt: Piece[] } {
  // The command's own lines carry a 4-column "  │ " and keep one column spare.
  const commandWidth = columns ? Math.max(16, Math.min(QUESTION_WIDTH, columns - 5)) : QUESTION_WIDTH;
  const lines: Piece[] = [];
  if (request.askedBy) lines.push(["  ⎿ [", request.askedBy, "] asks:"]);
  const command =
    request.tool === "execute_command" && typeof request.args.command === "string" ? request.args.command : undefined;
  if (command !== undefined) {
    const where = request.args.workingDirectory;
    lines.push([
      "? Allow execute_command",
      typeof where === "string" && [" in ", where],
      request.edited ? ", as you edited it" : "",
      ":",
    ]);
    // Wrapped as shown: a made-visible escape is longer than the character it stands for.
    for (const l of wrapText(sanitizeForTerminal(command), commandWidth)) lines.push(["  │ ", l]);
  } else {
    lines.push(["? Allow ", request.tool, request.edited ? " (as you edited it)" : "", " ", formatArgs(request.args)]);
  }
  lines.push(["  (", request.reason, ")"]);
  if (request.editError) lines.push(["  Your edit was not used: ", request.editError]);
  const choices: Piece[] = ["[y]es", "[n]o", "[e]dit"];
  if (request.asksEveryTime) {
    lines.push("  This call asks every time; it cannot be allowed for later.");
  } else if (request.alwaysRules?.length) {
    const rules = request.alwaysRules.flatMap((r, i) => [i > 0 && ", ", "`", r, "`"]);
    choices.push(
      ["[a]lways this session (", rules, ")"],
      `[p]roject: save the same allow rules in ${LOCAL_RULES_FILE}`,
    );
  } else {
    choices.push(["[a]lways this session (", request.tool, ")"]);
  }
  return {
    text: [block("\n"), lines.flatMap((l, i) => [i > 0 && block("\n"), l]), block("\n")],
    prompt: ["  ", choices.flatMap((c, i) => [i > 0 && " / ", c]), " / or type feedback: "],
  };
}

/**
 * The question as printed, and the prompt line's text: gated (ui/output.ts), then fitted to the
 * terminal's `columns`, the other lines and the choices wrapped at words (ui/text-width.ts).
 */
export function formatQuestion(request: ApprovalRequest, columns?: number): { text: string; prompt: string } {
  const { text, prompt } = questionPieces(request, columns);
  return fitQuestion({ text: render(text), prompt: render(prompt) }, columns);
}

/**
 * How a question's answer is read from the terminal; null when Ctrl-C or the end of input
 * cancelled it. `prefill`, the text to edit, is put on the line as readline's own state (its line
 * and cursor, drawn by its refresh), never written as keystrokes: typed, a "\r" in it would be
 * Enter and an escape a key. It must be one plain line (`isPlainLine`); the caller checks.
 */
export function readAnswer(
  prompt: string,
  prefill?: string,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): Promise<string | null> {
  const rl = trackQuestion(createInterface({ input, output, terminal: true }));
  return new Promise<string | null>((resolve) => {
    rl.once("SIGINT", () => resolve(null));
    rl.once("close", () => resolve(null));
    if (prefill === undefined) {
      rl.question(prompt).then(resolve, () => resolve(null));
      return;
    }
    if (!isPlainLine(prefill)) throw new Error("readAnswer: the text to edit must be one plain line");
    rl.once("line", resolve);
    rl.setPrompt(prompt);
    // Public, writable properties of the Interface; prompt(true) keeps the cursor where it is set.
    const state = rl as unknown as { line: string; cursor: number };
    state.line = prefill;
    state.cursor = prefill.length;
    rl.prompt(true);
  }).finally(() => rl.close());
}

/**
 * [e]dit: the call as text in the person's editor, or on the prompt line without one; the
 * arguments it gives, or why the question is asked again (said on the terminal), or null when
 * Ctrl-C cancelled it.
 */
async function editCall(
  request: ApprovalRequest,
  editor: string | undefined,
): Promise<ApprovalResponse | string | null> {
  const edit = editableText(request, !editor);
  let text: string;
  if (editor) {
    const edited = await editInEditor(editor, edit);
    if ("again" in edited) return edited.again;
    text = edited.text;
  } else {
    if (edit.text.includes("\n"))
      return "This command has several lines: set $VISUAL or $EDITOR to edit it in your editor.";
    // Control characters (shown as ^M, ^[ above) or a masked secret cannot go on the prompt line as they are.
    if (!isPlainLine(edit.text))
      return "This call has characters the terminal would act on, or a secret, that are shown masked above: set $VISUAL or $EDITOR to edit it in your editor.";
    const answer = await readAnswer(
      edit.kind === "command" ? "  edit command› " : "  edit arguments (JSON)› ",
      edit.text,
    );
    if (answer === null) return null;
    text = answer;
  }
  const read = readEdit(request, edit.kind, text);
  return "again" in read ? read.again : { decision: "edit", args: read.args };
}

export interface TerminalApproverOptions {
  /** The person's editor for [e]dit (settings.editor); without one the call is edited on the prompt line. */
  editor?: string;
}

/** Asks on the terminal; `before` lets the renderer stop its spinner first. */
export function createTerminalApprover(
  before: () => void,
  onCancel?: () => void,
  options: TerminalApproverOptions = {},
): Approver {
  return async (request: ApprovalRequest) => {
    before();
    const question = formatQuestion(request, process.stdout.columns);
    print(process.stdout, block(question.text));
    // What an edit would change, as a unified diff, so the answer is an informed one.
    if (request.preview)
      print(
        process.stdout,
        diffLines(request.preview).map((l) => ["    ", l, block("\n")]),
      );
    const prompt = question.prompt;
    const cancelled = (): ApprovalResponse => {
      // The question's line stays as it was typed; what follows starts on a new line.
      print(process.stdout, block("\n"));
      // Ctrl-C at the question cancels the whole turn, as it does anywhere else.
      onCancel?.();
      return { decision: "deny", feedback: "the user cancelled the question" };
    };
    for (;;) {
      const answer = await readAnswer(prompt);
      if (answer === null) return cancelled();
      const response = parseApprovalAnswer(answer, request);
      if (response !== "edit") {
        if (response) return response;
        continue;
      }
      const edited = await editCall(request, options.editor);
      if (edited === null) return cancelled();
      if (typeof edited !== "string") return edited;
      print(process.stdout, ["  ", edited, block("\n")]);
    }
  };
}

/** Without a terminal nobody can be asked: the call is not run (the engine says what would allow it). */
export const nonInteractiveApprover: Approver = async () => ({ ...UNATTENDED_RESPONSE });
