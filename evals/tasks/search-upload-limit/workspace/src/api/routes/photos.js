import { checkUpload } from "../../lib/uploads.js";

const photos = [];

export function listPhotos(req, res) {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(photos));
}

export function uploadPhoto(req, res) {
  const problem = checkUpload({ type: req.headers["content-type"], size: Number(req.headers["content-length"] ?? 0) });
  if (problem) {
    res.writeHead(422).end(problem);
    return;
  }
  photos.push({ id: photos.length + 1 });
  res.writeHead(201).end();
}
