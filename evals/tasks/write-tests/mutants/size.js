/** First in, first out. */
export class Queue {
  #items = [];

  enqueue(item) {
    this.#items.push(item);
    return this;
  }

  /** The oldest item, removed; undefined when empty. */
  dequeue() {
    return this.#items.shift();
  }

  /** The oldest item, left in place; undefined when empty. */
  peek() {
    return this.#items[0];
  }

  get size() {
    return this.#items.length + 1;
  }
}
