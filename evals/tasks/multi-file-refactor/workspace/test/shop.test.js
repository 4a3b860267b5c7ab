import { test } from "node:test";
import assert from "node:assert/strict";
import { cartSummary } from "../src/cart.js";
import { invoiceText } from "../src/invoice.js";

test("cart summary", () => {
  assert.equal(cartSummary([{ unitCents: 1250, quantity: 2 }, { unitCents: 1750, quantity: 1 }]), "3 items, 42.50 EUR");
  assert.equal(cartSummary([{ unitCents: 5, quantity: 1 }], "USD"), "1 item, 0.05 USD");
});

test("invoice with a refund", () => {
  assert.equal(invoiceText([{ label: "Lamp", cents: 3999 }, { label: "Refund", cents: -500 }]), "Lamp: 39.99 EUR\nRefund: -5.00 EUR\nTotal: 34.99 EUR");
});
