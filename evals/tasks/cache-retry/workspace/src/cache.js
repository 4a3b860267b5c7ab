/** Caches the promises of an async loader by key, so each key is loaded once. */
export class Cache {
  constructor(load) {
    this.load = load;
    this.entries = new Map();
  }

  get(key) {
    if (!this.entries.has(key)) this.entries.set(key, this.load(key));
    return this.entries.get(key);
  }
}
