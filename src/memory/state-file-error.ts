import { shellQuote } from "../shell-quote.js";

/** The thread database cannot be read: named, with what to do, before anything is added to it. */
export class StateFileError extends Error {
  override name = "StateFileError";
  constructor(
    readonly file: string,
    cause: string,
  ) {
    super(
      `${file} is not a readable SQLite database (${cause}), so the saved threads of this workspace cannot be read. ` +
        `Move it aside and run again, e.g. mv ${shellQuote(file)} ${shellQuote(`${file}.damaged`)}; a new, empty one is made (the threads in the old one stay in the moved file).`,
    );
  }
}
