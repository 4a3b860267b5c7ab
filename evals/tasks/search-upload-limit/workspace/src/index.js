import { createApp } from "./api/app.js";

createApp().listen(Number(process.env.PORT ?? 8080));
