// Two explorations through parallel task calls change nothing, and the answer names both ports.
import { expectWorkspaceUnchanged, fail, finalAnswer } from "../../check-lib.mjs";

expectWorkspaceUnchanged();
const answer = finalAnswer();
if (!/\b8080\b/.test(answer)) fail(`the answer does not name the api's port 8080: ${answer}`);
if (!/\b3000\b/.test(answer)) fail(`the answer does not name the web front end's port 3000: ${answer}`);
console.log("ok");
