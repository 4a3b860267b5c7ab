import { VERSION } from "./version.js";

export const greet = (name) => `Hello, ${name}! (greeter ${VERSION})`;
