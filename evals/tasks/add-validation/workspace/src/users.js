let nextId = 1;

/** A new user record; the name is trimmed and the email lower-cased. */
export function createUser({ name, email }) {
  return { id: nextId++, name: name.trim(), email: email.toLowerCase() };
}
