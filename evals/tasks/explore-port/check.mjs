// An exploration through the task tool changes nothing, and the answer names the port the sub-agent found.
import { expectWorkspaceUnchanged, fail, finalAnswer } from "../../check-lib.mjs";

expectWorkspaceUnchanged();
const answer = finalAnswer();
if (!/\b8080\b/.test(answer)) fail(`the answer does not name port 8080: ${answer}`);
console.log("ok");
