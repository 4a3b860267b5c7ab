/** First wait between attempts; each later wait is twice the one before. */
const BASE_DELAY_MS = 1000;

/** Calls fn until it succeeds, at most `attempts` times, waiting longer after each failure. */
export async function withRetry(fn, attempts = 5) {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i + 1 >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, BASE_DELAY_MS * 2 ** i));
    }
  }
}
