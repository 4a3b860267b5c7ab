// A question changes nothing: every file is as it was, none added; and the answer explains the doubling wait.
import { expectWorkspaceUnchanged, fail, finalAnswer } from "../../check-lib.mjs";

expectWorkspaceUnchanged(" to answer a question");
const answer = finalAnswer();
if (!/doubl|twice|2 ?\*\* ?i|2\^|exponential/i.test(answer)) fail(`the answer does not say the wait doubles: ${answer}`);
console.log("ok");
