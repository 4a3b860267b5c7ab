import path from "node:path";
import { PROJECT_ROOT } from "../project-root.js";
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { loadRecording, replayResponse, ReplayDivergenceError, type Recording } from "./replay.js";
import { DO_SOMETHING_ELSE, TELL_THE_USER } from "../policy/approval.js";
import { DO_NOT_GET_AROUND } from "../guard/failure.js";
import { PLAN_ACCEPTED_TASK, PLAN_MODE_NOTE, requestTask } from "../policy/plan-mode.js";
import { declarationOf } from "../contracts/tools.js";
import { messageText } from "../provider/message.js";
import { offlineTaskTurn } from "./offline-task.js";
import { afterReadFirst, readFirstTurn, toolCall } from "./offline-read-first.js";

/**
 * The embedded offline model: a real chat model (same graph, same tools, same trace) that
 * understands a few literal instructions, so `npm start` does something useful with no key.
 * It never pretends to plan: anything it does not recognise gets an honest answer.
 */

export const OFFLINE_MODEL_NAME = "mini-cursor-offline";

export interface OfflineIntent {
  tool: "list_directory" | "read_file" | "write_file" | "execute_command";
  args: Record<string, string>;
  /** What the request asks beyond this one call ("and fix the bug"), which the offline model cannot do. */
  rest?: string;
}

const CJK = /[\u3400-\u9fff]/;
/** A path whose last part has an extension (package.json, src/App.tsx), not "." or "..". */
const FILE_NAME = /(?:^|[\\/])[^\\/.][^\\/]*\.[A-Za-z0-9]{1,8}$/;
/** What joins a second instruction to the first: "and fix it", ", then run it", "然后修复". */
const MORE_WORK = /^\s*(?:[,;，；]\s*)?(?:and(?:\s+then)?|then|also|plus|&|并且?|然后|再)\s*(.+)$/isu;

/** The part of a request after the one instruction the offline model follows, if any. */
function restAfter(request: string, end: number): string | undefined {
  const more = MORE_WORK.exec(request.slice(end));
  const rest = more?.[1]?.trim().replace(/[.。!！]+$/u, "");
  return rest ? rest : undefined;
}
const HERE_WORDS = new Set(["here", "this", "current", "the", "it", "cwd", "workspace", ".", "./"]);

/** What mini-cursor attached after the person's words: `@path` files (app/mentions.ts) and piped text. */
const ATTACHED = /\n\n<(?:file path="[^"\n]*"|stdin)>\n[\s\S]*?\n<\/(?:file|stdin)>/g;

/** The person's words of a request, without what was attached to them. */
function ownWords(request: string): string {
  return request.replace(ATTACHED, "").trim();
}

/** A path as typed: quotes, and the @ of an @mention ("read @package.json"), taken off. */
function unquotePath(text: string): string {
  const bare = unquote(text);
  return bare.length > 1 && bare.startsWith("@") ? bare.slice(1) : bare;
}

function unquote(text: string): string {
  const t = text.trim().replace(/[。.!！?？]+$/u, (m) => (text.trim().length > m.length ? "" : m));
  // Each pair is an opening and a closing character.
  for (const [open, close] of ["``", '""', "''", "“”", "「」"]) {
    if (t.length >= 2 && t.startsWith(open!) && t.endsWith(close!)) return t.slice(1, -1);
  }
  return t;
}

function firstPathToken(text: string): string | undefined {
  const quoted = text.match(/[`'"“]([^`'"”]+)[`'"”]/u);
  if (quoted) return quoted[1];
  return text.match(/[A-Za-z0-9_@~][\w@.~\-/\\]*|\.{1,2}\/?[\w@.\-/\\]*/)?.[0];
}

function parseList(request: string): OfflineIntent | undefined {
  const en = /\b(list|ls|show (me )?(the )?files|what('s| is| files are) (in|inside|under))\b/i;
  const zh = /(列出|列表|有哪些文件|目录下|看看.*(目录|文件夹))/u;
  if (!en.test(request) && !zh.test(request)) return undefined;
  let dir: string | undefined = request.match(/^\s*ls\s+(?:-\w+\s+)*([^\s-]\S*)/)?.[1];
  const where = request.match(
    /\b(?:in|of|under|inside|at)\s+(?:the\s+)?(?:folder\s+|directory\s+|dir\s+)?([`'"]?[^\s`'"?]+[`'"]?)/i,
  );
  if (!dir && where) dir = unquotePath(where[1]!);
  if (!dir && CJK.test(request))
    dir = firstPathToken(request.replace(/列出|目录|文件夹|文件|下的|里的|中的|所有/gu, " "));
  if (!dir || HERE_WORDS.has(dir.toLowerCase()) || /^(files?|everything|directory|folder)$/i.test(dir)) dir = ".";
  const target = dir.replace(/[.?!]+$/, "") || ".";
  // "what is in package.json?": a file name (it has an extension) means read the file.
  if (!/^ls\b/.test(request.trim()) && FILE_NAME.test(target)) return { tool: "read_file", args: { filePath: target } };
  return { tool: "list_directory", args: { directoryPath: target } };
}

function parseWrite(request: string): OfflineIntent | undefined {
  const enNamed = request.match(
    /\b(?:create|write|make|save)\s+(?:a\s+|the\s+|new\s+)*(?:file\s+)?(?:named\s+|called\s+)?([`'"]?[^\s`'"]+[`'"]?)\s+(?:with|containing)\s+(?:the\s+)?(?:content|contents|text)?\s*[:：]?\s*([\s\S]+)$/i,
  );
  if (enNamed)
    return { tool: "write_file", args: { filePath: unquotePath(enNamed[1]!), content: unquote(enNamed[2]!) } };
  const enTo = request.match(
    /\bwrite\s+([`'"])([\s\S]*?)\1\s+(?:to|into)\s+(?:a\s+|the\s+)?(?:file\s+)?([`'"]?[^\s`'"]+[`'"]?)/i,
  );
  if (enTo) return { tool: "write_file", args: { filePath: unquotePath(enTo[3]!), content: enTo[2]! } };
  const zh = request.match(
    /(?:创建|新建|写入|写)(?:一个)?(?:文件)?\s*([`'"“]?[^\s`'"”，,：:]+[`'"”]?)\s*[，,]?\s*(?:内容(?:为|是)?|写入)\s*[:：]?\s*([\s\S]+)$/u,
  );
  if (zh) return { tool: "write_file", args: { filePath: unquotePath(zh[1]!), content: unquote(zh[2]!) } };
  return undefined;
}

function parseRun(request: string): OfflineIntent | undefined {
  // A `!command` with backticks in it (app/slash-commands.ts shellEscapeRequest): the whole of it.
  const exact = /^\s*run exactly this command:\s*\n([\s\S]+)$/i.exec(request);
  if (exact) return { tool: "execute_command", args: { command: exact[1]!.trim() } };
  const backticked = request.match(/(?:\b(?:run|execute|exec)\b|运行|执行)[^`]*`([^`]+)`/iu);
  if (backticked) {
    const rest = restAfter(request, backticked.index! + backticked[0].length);
    return { tool: "execute_command", args: { command: backticked[1]!.trim() }, ...(rest ? { rest } : {}) };
  }
  const plain = request.match(
    /^\s*(?:please\s+)?(?:run|execute|exec)\s+(?:exactly\s+)?(?:the\s+|this\s+)?(?:command\s*:?\s+)?([\s\S]+)$/i,
  );
  if (plain) return { tool: "execute_command", args: { command: unquote(plain[1]!) } };
  const zh = request.match(/(?:运行|执行)\s*(?:命令)?\s*[:：]?\s*([\s\S]+)$/u);
  if (zh) return { tool: "execute_command", args: { command: unquote(zh[1]!) } };
  return undefined;
}

function parseRead(request: string): OfflineIntent | undefined {
  const en = request.match(
    /\b(?:read|show|cat|open|display|print|view)\s+(?:me\s+)?(?:the\s+)?(?:contents?\s+of\s+)?(?:the\s+)?(?:file\s+)?([`'"]?[^\s`'"]+[`'"]?)/i,
  );
  const found =
    en ?? request.match(/(?:读取|查看|显示|打开|读)\s*(?:一下)?\s*(?:文件)?\s*([`'"“]?[^\s`'"”，,。]+[`'"”]?)/u);
  if (!found) return undefined;
  const rest = restAfter(request, found.index! + found[0].length);
  const filePath = en ? unquotePath(en[1]!).replace(/[?!,]+$/, "") : unquotePath(found[1]!);
  return { tool: "read_file", args: { filePath }, ...(rest ? { rest } : {}) };
}

/** The recording of the seed's flagship task, which the offline model plays (`npm run demo` too). */
export const TODO_DEMO_RECORDING = path.join(PROJECT_ROOT, "demos", "todo-app.jsonl");
const TODO_DEMO_LABEL = "demos/todo-app.jsonl";

/** "create a React todo app", "build a React TodoList with Vite", "创建React TodoList应用"... */
export function isTodoAppRequest(request: string): boolean {
  if (!/react/i.test(request) || !/(todo|to-do|待办)/iu.test(request)) return false;
  if (!/\b(app|application|project|list)\b|todolist|应用|项目|程序|清单/iu.test(request)) return false;
  return /\b(create|build|make|scaffold|generate|set up|setup|write|start)\b|创建|新建|搭建|做|写|生成|实现|开发/iu.test(
    request,
  );
}

let todoRecording: Recording | undefined;

/**
 * The next response of the recorded TodoList run: the n-th model turn since the request is the
 * n-th recorded response. When the run left the recording (a command declined or failing), it
 * says so instead of playing on.
 */
function playTodoDemo(sinceRequest: BaseMessage[], zh: boolean): AIMessage {
  const index = sinceRequest.filter((m) => AIMessage.isInstance(m)).length;
  try {
    todoRecording ??= loadRecording(TODO_DEMO_RECORDING, TODO_DEMO_LABEL);
    const played = replayResponse(todoRecording, index, [...sinceRequest]);
    return zh ? inChinese(played) : played;
  } catch (err) {
    if (!(err instanceof ReplayDivergenceError)) throw err;
    const hint = zh
      ? "离线模型只能按录制好的步骤演示这个任务，无法随机应变：请加 --approval full-auto 运行（npm run demo 就是这样做的），并确保能访问 npm 仓库；或者设置 OPENAI_API_KEY 让真正的模型来做。"
      : "The offline model plays a recording of this task and cannot adapt to a different outcome: run it with --approval full-auto (as `npm run demo` does) and with access to the npm registry, or set OPENAI_API_KEY to let a real model do it.";
    return new AIMessage({
      content: zh ? `演示没能按录制继续下去（${err.message}）\n\n${hint}` : `${err.message}\n\n${hint}`,
    });
  }
}

/** A call of the recorded run, said in Chinese. */
function callInChinese(call: { name: string; args: Record<string, unknown> }): string {
  const arg = (key: string) => String(call.args[key] ?? "");
  switch (call.name) {
    case "execute_command":
      return `运行 \`${arg("command")}\`${call.args.workingDirectory ? `（在 ${arg("workingDirectory")} 中）` : ""}`;
    case "write_file":
      return `写入 ${arg("filePath")}`;
    case "list_directory":
      return `查看目录 ${arg("directoryPath")}`;
    case "read_file":
      return `读取 ${arg("filePath")}`;
    default:
      return call.name;
  }
}

/**
 * The recording speaks English; asked in Chinese, the demo answers in Chinese: the same calls,
 * with what each step does and the final answer (with the URL the dev server announced) said
 * in the request's language.
 */
function inChinese(message: AIMessage): AIMessage {
  const calls = message.tool_calls ?? [];
  const urls = [...new Set(messageText(message).match(/https?:\/\/[^\s)`]+/g) ?? [])];
  const content =
    calls.length > 0
      ? `接下来：${calls.map(callInChinese).join("；")}。`
      : `React TodoList 应用已经完成${urls.length > 0 ? `，正在 ${urls.join("、")} 运行` : ""}：可以添加、勾选、删除待办，按全部 / 未完成 / 已完成筛选，显示剩余数量，并保存在 localStorage 中；\`npm run build\` 已通过。（这是离线模型播放的录制演示 ${TODO_DEMO_LABEL}。）`;
  return new AIMessage({ id: message.id, content, tool_calls: calls, response_metadata: message.response_metadata });
}

/** What the offline model makes of a request; exported so tests can check the grammar. */
export function parseOfflineIntent(request: string): OfflineIntent | undefined {
  const text = ownWords(request);
  // A request that is one @mention: read that file.
  const mention = /^@(\S+)$/.exec(text);
  if (mention) return { tool: "read_file", args: { filePath: mention[1]! } };
  return parseWrite(text) ?? parseRun(text) ?? parseList(text) ?? parseRead(text);
}

export function offlineHelp(request: string): string {
  if (CJK.test(request)) {
    return [
      "我是 mini-cursor 的离线模型：没有配置 API key 或 base URL，所以只能执行简单、字面的指令：",
      "- 列出目录：“列出 src 目录”",
      "- 读取文件：“读取 package.json”",
      "- 写文件：“创建文件 hello.txt 内容为 你好”",
      "- 运行命令：“运行 `npm test`”",
      "要让真正的模型来规划和写代码，请在环境变量或 .env 中设置 OPENAI_API_KEY（DeepSeek、Ollama 等再加 OPENAI_BASE_URL），参见 .env.example。",
    ].join("\n");
  }
  return [
    "I'm mini-cursor's offline model: no API key or base URL is configured, so I can only follow simple, literal instructions:",
    '- list a directory: "list the files in src"',
    '- read a file: "read package.json"',
    '- write a file: "create a file hello.txt with content Hello"',
    '- run a command: "run `npm test`"',
    "To let a real model plan and write code, set OPENAI_API_KEY (plus OPENAI_BASE_URL for DeepSeek, Ollama, vLLM, ...) in the environment or in .env; see .env.example.",
  ].join("\n");
}

/** What the offline model could not do of a request, and why, in the request's language. */
function unfinished(rest: string, zh: boolean): string {
  return zh
    ? `我没有做“${rest}”：离线模型每次只能执行一条简单、字面的指令，不会规划或修改代码。要让真正的模型来做，请设置 OPENAI_API_KEY（参见 .env.example）。`
    : `I did not do the rest of the request ("${rest}"): the offline model follows one simple, literal instruction and cannot plan or change code. To let a real model do it, set OPENAI_API_KEY (see .env.example).`;
}

/** The answer after the tools ran: what they returned, said plainly; a call that did not run is said to have not run. */
function summarise(results: ToolMessage[], calls: AIMessage | undefined, zh: boolean, rest?: string): string {
  const parts = results.map((result) => {
    const call = calls?.tool_calls?.find((c) => c.id === result.tool_call_id);
    const args = call?.args ?? {};
    const body = messageText(result);
    if ((result.artifact as { notRun?: unknown } | undefined)?.notRun === true) {
      const what = call?.name === "execute_command" ? `\`${String(args.command ?? "")}\`` : (call?.name ?? "the call");
      // The result's last sentence speaks to the model; the user reads the rest.
      const forUser = [TELL_THE_USER, DO_SOMETHING_ELSE, DO_NOT_GET_AROUND].reduce(
        (text, s) => (text.endsWith(` ${s}`) ? text.slice(0, -s.length - 1) : text),
        body,
      );
      return `${zh ? `没有运行 ${what}：` : `Did not run ${what}:`}\n\n${forUser}`;
    }
    if (result.status === "error" && call?.name === "execute_command") {
      return `${zh ? "运行了" : "Ran"} \`${String(args.command ?? "")}\`${zh ? "，但它失败了" : ", and it failed"}:\n\n${body}`;
    }
    switch (call?.name) {
      case "list_directory":
        return `${zh ? "目录" : "Contents of"} ${String(args.directoryPath ?? ".")}:\n\n${body}`;
      case "read_file":
        return `${zh ? "文件" : "File"} ${String(args.filePath ?? "")}:\n\n${body}`;
      case "execute_command":
        return `${zh ? "运行了" : "Ran"} \`${String(args.command ?? "")}\`:\n\n${body}`;
      default:
        return body;
    }
  });
  if (rest) parts.push(unfinished(rest, zh));
  return parts.join("\n\n");
}

/** The answer to "Carry out the plan." when the conversation holds no plan-mode request. */
export const NO_PLAN_TO_CARRY_OUT =
  "There is no plan in this conversation to carry out: make one first in plan mode (/plan <request>, or --approval plan).";

/** The person's words of the latest request made in plan mode, if any. */
function lastPlannedRequest(messages: readonly BaseMessage[]): string | undefined {
  const planned = [...messages]
    .reverse()
    .find((m) => m.getType() === "human" && messageText(m).includes(PLAN_MODE_NOTE));
  return planned && requestTask(messageText(planned));
}

/** The one step of an offline plan, as a todo item (at most MAX_TODO_CHARS, so long contents are cut). */
function describeIntent(intent: OfflineIntent, zh: boolean): string {
  const short = (text: string) => (text.length > 60 ? `${text.slice(0, 57)}...` : text);
  const a = intent.args;
  switch (intent.tool) {
    case "write_file":
      return zh
        ? `写入 ${short(a.filePath ?? "")}，内容为“${short(a.content ?? "")}”`
        : `Write ${short(a.filePath ?? "")} with the content "${short(a.content ?? "")}"`;
    case "execute_command":
      return zh ? `运行 \`${short(a.command ?? "")}\`` : `Run \`${short(a.command ?? "")}\``;
    case "read_file":
      return zh ? `读取 ${short(a.filePath ?? "")}` : `Read ${short(a.filePath ?? "")}`;
    case "list_directory":
      return zh ? `列出 ${short(a.directoryPath ?? ".")}` : `List ${short(a.directoryPath ?? ".")}`;
  }
}

/** The answer that ends an offline plan-mode request: the plan, what was read for it, and how to go on. */
function planAnswer(intent: OfflineIntent, summary: string, zh: boolean): string {
  const step = describeIntent(intent, zh);
  const head = zh
    ? `计划（离线模型，一步）：\n1. ${step}\n计划模式下没有修改任何文件。接受计划（/plan accept）后执行。`
    : `Plan (offline model, one step):\n1. ${step}\nNothing was changed in plan mode. Accept the plan (/plan accept) to carry it out.`;
  return summary ? `${head}\n\n${summary}` : head;
}

/** How context/compaction.ts's request to summarise a conversation begins. */
const SUMMARY_REQUEST = "Conversation to summarise";
/** Lines of the transcript an offline summary keeps, each cut to SUMMARY_LINE_CHARS. */
const SUMMARY_LINES = 40;
const SUMMARY_LINE_CHARS = 200;

/**
 * The offline model cannot summarise, so it lists: each request, call and earlier summary of the
 * transcript on a line of its own (the newest SUMMARY_LINES), which is what the conversation
 * needs to go on from.
 */
function offlineSummary(request: string): string {
  const kept = request
    .split("\n")
    .filter((l) => /^(USER: |\[called |EARLIER SUMMARY:)/.test(l))
    .map((l) => (l.length > SUMMARY_LINE_CHARS ? `${l.slice(0, SUMMARY_LINE_CHARS - 1)}…` : l));
  const lines = kept.slice(-SUMMARY_LINES);
  return [
    "The conversation so far (listed by the offline model, which cannot summarise):",
    ...(kept.length > lines.length ? [`(${kept.length - lines.length} earlier lines left out)`] : []),
    ...lines.map((l) => `- ${l}`),
  ].join("\n");
}

export class OfflineChatModel extends BaseChatModel {
  private tools: BindToolsInput[] = [];

  constructor(fields: BaseChatModelParams = {}) {
    super(fields);
  }

  _llmType(): string {
    return OFFLINE_MODEL_NAME;
  }

  override bindTools(tools: BindToolsInput[]): OfflineChatModel {
    const bound = new OfflineChatModel({ callbacks: this.callbacks });
    bound.tools = tools;
    return bound;
  }

  private hasTool(name: string): boolean {
    // Unbound (tests, Studio introspection) means "all tools available".
    return this.tools.length === 0 || this.tools.some((t) => (t as { name?: string }).name === name);
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.respond(messages);
    return { generations: [{ text: messageText(message), message }] };
  }

  private respond(messages: BaseMessage[]): AIMessage {
    let lastHuman = -1;
    messages.forEach((m, i) => {
      if (m.getType() === "human") lastHuman = i;
    });
    const sent = lastHuman >= 0 ? messageText(messages[lastHuman]!) : "";
    // Asked to summarise a conversation (compaction): it lists what was asked and done, in order.
    if (sent.startsWith(SUMMARY_REQUEST)) return new AIMessage({ content: offlineSummary(sent) });
    // The person's words only: mini-cursor's note (plan mode's rules) is for the model, never an argument.
    let request = requestTask(sent);
    const planning = sent.includes(PLAN_MODE_NOTE);
    const zh = CJK.test(request);
    const after = messages.slice(lastHuman + 1);
    // "explore …": handed to an explore sub-agent through the task tool (offline-task.ts).
    const delegated = offlineTaskTurn(request, after, (name) => this.hasTool(name));
    if (delegated) return delegated;
    if (isTodoAppRequest(request) && this.hasTool("execute_command") && this.hasTool("write_file"))
      return playTodoDemo(after, zh);
    if (request === PLAN_ACCEPTED_TASK) {
      const planned = lastPlannedRequest(messages.slice(0, Math.max(lastHuman, 0)));
      if (!planned) return new AIMessage({ content: zh ? "没有可执行的计划。" : NO_PLAN_TO_CARRY_OUT });
      request = planned;
    }
    const results = after.filter(ToolMessage.isInstance);
    const intent = parseOfflineIntent(request);
    // write_file refused to replace a file not read yet: read it, then write again (once).
    const recovery = planning ? undefined : readFirstTurn(after, zh);
    if (recovery) return recovery;
    const recovered = afterReadFirst(after, zh);
    if (recovered) {
      const summary = summarise(recovered.results, undefined, zh, intent?.rest);
      return new AIMessage({ content: `${recovered.note}\n\n${summary}` });
    }
    if (results.length > 0) {
      const caller = [...after]
        .reverse()
        .find((m): m is AIMessage => AIMessage.isInstance(m) && !!m.tool_calls?.length);
      const summary = summarise(
        results.filter((r) => r.name !== "write_todos"),
        caller,
        zh,
        intent?.rest,
      );
      return new AIMessage({ content: planning && intent ? planAnswer(intent, summary, zh) : summary });
    }
    if (!intent || !this.hasTool(intent.tool)) return new AIMessage({ content: offlineHelp(request) });
    if (planning) {
      // Plan mode: the step becomes the plan, and a step that only reads is taken now to inform it.
      const calls = [toolCall("write_todos", { todos: [{ content: describeIntent(intent, zh), status: "pending" }] })];
      if (declarationOf(this.tools.find((t) => (t as { name?: string }).name === intent.tool)).kind === "read")
        calls.push(toolCall(intent.tool, intent.args));
      return new AIMessage({ content: "", tool_calls: this.hasTool("write_todos") ? calls : calls.slice(1) });
    }
    return new AIMessage({ content: "", tool_calls: [toolCall(intent.tool, intent.args)] });
  }
}
