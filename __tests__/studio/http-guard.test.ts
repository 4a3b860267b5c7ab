import { requestRefusal, type RequestFacts } from "../../src/studio/http-guard.js";
import { studioGuardSettings } from "../../src/settings.js";

/** Issue 25, item 6: who may call the Studio dev server (the real server is tested in studio.test.ts). */

const allowed = studioGuardSettings({});
const base: RequestFacts = {
  method: "POST",
  host: "127.0.0.1:2024",
  contentType: "application/json",
  hasBody: true,
  localPort: 2024,
};
const verdict = (facts: Partial<RequestFacts>) => requestRefusal({ ...base, ...facts }, allowed)?.status;

test("loopback hosts on the server's own port pass; other names and ports (DNS rebinding) do not", () => {
  for (const host of ["127.0.0.1:2024", "localhost:2024", "[::1]:2024", "LOCALHOST:2024"])
    expect(verdict({ host })).toBeUndefined();
  for (const host of [
    "evil.example:2024",
    "127.0.0.1:2025",
    "127.0.0.1",
    "localhost.evil.example:2024",
    "",
    "127.0.0.1:2024@evil",
  ])
    expect(verdict({ host })).toBe(403);
  expect(verdict({ host: undefined })).toBe(403);
});

test("Origin: none (a local tool), Studio's and the server's own pass; any other page does not", () => {
  expect(verdict({ origin: undefined })).toBeUndefined();
  expect(verdict({ origin: "https://smith.langchain.com" })).toBeUndefined();
  expect(verdict({ origin: "http://127.0.0.1:2024" })).toBeUndefined();
  for (const origin of [
    "https://evil.example",
    "null",
    "http://127.0.0.1:3000",
    "https://smith.langchain.com.evil.example",
  ])
    expect(verdict({ origin })).toBe(403);
  const custom = studioGuardSettings({
    MINI_CURSOR_STUDIO_ORIGIN: "https://studio.internal/x/",
    MINI_CURSOR_STUDIO_HOST: "10.0.0.5",
  });
  expect(requestRefusal({ ...base, origin: "https://studio.internal" }, custom)).toBeUndefined();
  expect(requestRefusal({ ...base, host: "10.0.0.5:2024" }, custom)).toBeUndefined();
  expect(studioGuardSettings({ MINI_CURSOR_STUDIO_HOST: "0.0.0.0" }).hosts).toEqual(["127.0.0.1", "localhost", "::1"]);
});

test("bodies must be JSON; a bodiless POST (cancel) and GETs need no type", () => {
  for (const contentType of [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/jsonx",
  ])
    expect(verdict({ contentType })).toBe(415);
  expect(verdict({ contentType: undefined, hasBody: true })).toBe(415);
  expect(verdict({ contentType: "application/json; charset=utf-8" })).toBeUndefined();
  expect(verdict({ contentType: undefined, hasBody: false })).toBeUndefined();
  expect(verdict({ method: "GET", contentType: undefined, hasBody: false })).toBeUndefined();
});
