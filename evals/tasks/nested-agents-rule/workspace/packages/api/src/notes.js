/** Every note, newest first. */
export function listNotes() {
  return { status: 200, body: [] };
}
