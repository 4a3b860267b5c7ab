import { identity } from "./functions";

export function sumBy(list, pick = identity) {
  return list.reduce((sum, item) => sum + pick(item), 0);
}
