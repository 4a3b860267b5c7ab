import { PORT, HOST } from "./config.js";
console.log(`listening on ${HOST}:${PORT}`);
