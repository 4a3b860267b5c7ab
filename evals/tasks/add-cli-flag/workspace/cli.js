#!/usr/bin/env node
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    name: { type: "string", short: "n", default: "world" },
  },
});

console.log(`Hello, ${values.name}!`);
