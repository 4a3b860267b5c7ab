import http from "node:http";
import { HOST, PORT } from "./config.js";

http.createServer((_req, res) => res.end("{}")).listen(PORT, HOST);
