const TOKEN_HEADER = "x-api-token";

export function authenticate(req, res) {
  if (req.headers[TOKEN_HEADER]) return true;
  res.writeHead(401).end("missing token");
  return false;
}
