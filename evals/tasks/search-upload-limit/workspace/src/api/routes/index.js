import { listPhotos, uploadPhoto } from "./photos.js";

export const routes = {
  "GET /photos": listPhotos,
  "POST /photos": uploadPhoto,
};
