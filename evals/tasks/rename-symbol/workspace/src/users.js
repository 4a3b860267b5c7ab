/** The name shown for a user: the nickname when set, else first and last name. */
export function getUserName(user) {
  if (user.nickname) return user.nickname;
  return `${user.firstName} ${user.lastName}`.trim();
}

export function isAdmin(user) {
  return user.roles?.includes("admin") ?? false;
}
