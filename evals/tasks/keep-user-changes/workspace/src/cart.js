/** The sum of a cart's lines: each item has a price and an optional qty. */
export function total(items) {
  let sum = 0;
  for (const item of items) sum += item.price;
  return sum;
}
