export const PORT = 8080;
export const HOST = "127.0.0.1";
