import { titleCase } from "./utils/strings";
import { sumBy } from "./utils/numbers";

const items = [
  { name: "green apples", count: 6 },
  { name: "oat milk", count: 2 },
  { name: "bread", count: 1 },
];

for (const item of items) console.log(`${titleCase(item.name)} x${item.count}`);
console.log(`Total: ${sumBy(items, (i) => i.count)} items`);
