import type { IncomingMessage } from "node:http";
import { Hono } from "hono";
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { studioGuardSettings, type StudioGuardSettings } from "../settings.js";
import { gateText } from "../workspace/output-gate.js";
import { noticeOnTerminal } from "../ui/terminal.js";

/**
 * The dev server's API has no authentication, and browsers let any web page send it "simple"
 * requests (a `text/plain` POST needs no preflight, and the server reads text/plain as JSON), or
 * reach it under the page's own host name through DNS rebinding. langgraph.json mounts the guard
 * twice: as the server's `auth` (its authenticate hook runs before every route, the dev server's
 * own `/internal/truncate` included, but skips `GET /info` and the UI's assets), and as `http.app`,
 * whose middleware runs before every route registered after it (those two included). A request is
 * refused unless
 *   - its Host is a loopback name (or the `--host` bound) with the server's own port;
 *   - its Origin, when it has one (browsers always send it cross-site), is LangGraph Studio's or
 *     the server's own;
 *   - a request that carries a body says `application/json`.
 */

export interface RequestFacts {
  method: string;
  host?: string;
  origin?: string;
  contentType?: string;
  /** Whether the request carries a body (content-length above 0, or chunked). */
  hasBody: boolean;
  /** The port the request arrived on. */
  localPort: number;
}

export interface Refusal {
  status: 403 | 415;
  detail: string;
}

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** "127.0.0.1:2024", "[::1]:2024", "localhost:2024" → name and port (80 when none is given). */
function parseHost(host: string): { name: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/i.exec(host.trim());
  if (!m) return undefined;
  return { name: (m[1] ?? m[2]!).toLowerCase().replace(/\.$/, ""), port: m[3] ? Number(m[3]) : 80 };
}

/** Why a request is refused, or undefined when it may go on. */
export function requestRefusal(request: RequestFacts, allowed: StudioGuardSettings): Refusal | undefined {
  const host = request.host === undefined ? undefined : parseHost(request.host);
  if (!host || !allowed.hosts.includes(host.name) || host.port !== request.localPort) {
    return {
      status: 403,
      detail: `mini-cursor's Studio server answers only requests addressed to 127.0.0.1:${request.localPort} or localhost:${request.localPort}, not to "${request.host ?? ""}"; open Studio with the URL npm run studio printed.`,
    };
  }
  if (request.origin !== undefined) {
    const own = allowed.hosts.map((name) => `http://${name.includes(":") ? `[${name}]` : name}:${request.localPort}`);
    if (![...allowed.origins, ...own].includes(request.origin)) {
      return {
        status: 403,
        detail: `mini-cursor's Studio server answers only LangGraph Studio (${allowed.origins.join(", ")}) and local tools, not a page from ${request.origin}.`,
      };
    }
  }
  if (BODY_METHODS.has(request.method.toUpperCase())) {
    const typed = request.contentType !== undefined && request.contentType !== "";
    if ((typed || request.hasBody) && !JSON_TYPE.test(request.contentType ?? "")) {
      return {
        status: 415,
        detail: `mini-cursor's Studio server takes request bodies as application/json only, got "${request.contentType ?? "no content type"}".`,
      };
    }
  }
  return undefined;
}

/** The facts of a request; `localPort` is the socket's, or the server's own for the auth hook (which sees no socket). */
function factsOf(headers: Headers, method: string, localPort: number): RequestFacts {
  const length = Number(headers.get("content-length") ?? "0");
  return {
    method,
    host: headers.get("host") ?? undefined,
    origin: headers.get("origin") ?? undefined,
    contentType: headers.get("content-type") ?? undefined,
    hasBody: length > 0 || headers.has("transfer-encoding"),
    localPort,
  };
}

function refuse(method: string, pathname: string, refusal: Refusal): void {
  noticeOnTerminal(gateText(`mini-cursor: refused ${method} ${pathname}: ${refusal.detail}\n`));
}

/** Read at the first request: the dev server has set PORT by then. */
let allowed: StudioGuardSettings | undefined;

/** Who the auth hook says made an admitted request (the dev server puts it in each run's config). */
const LOCAL_CALLER = "mini-cursor-local";

/**
 * langgraph.json's `auth` (with `disable_studio_auth`, so Studio's own header does not skip it):
 * the same guard, before every route. Without the server's port (no PORT), the Host's port is
 * not checked here; the `http.app` middleware still checks it for every route but the truncate.
 */
export const auth = new Auth().authenticate(async (request: Request) => {
  allowed ??= studioGuardSettings();
  const hostPort = /:(\d{1,5})$/.exec(request.headers.get("host") ?? "")?.[1];
  const port = allowed.port ?? Number(hostPort ?? 80);
  const refusal = requestRefusal(factsOf(request.headers, request.method, port), allowed);
  if (refusal) {
    refuse(request.method, new URL(request.url, "http://localhost").pathname, refusal);
    throw new HTTPException(refusal.status, {
      message: JSON.stringify({ detail: refusal.detail }),
      headers: { "content-type": "application/json" },
    });
  }
  return { identity: LOCAL_CALLER, permissions: [] };
});

type Bindings = { incoming?: IncomingMessage };

/** The app langgraph.json's `http.app` names; it adds no routes, only the guard in front of them. */
export const app = new Hono<{ Bindings: Bindings }>();

app.use("*", async (c, next) => {
  const incoming = c.env?.incoming;
  // Calls the server makes to itself in process (webhooks, custom routes) have no socket.
  if (incoming) {
    allowed ??= studioGuardSettings();
    const refusal = requestRefusal(factsOf(c.req.raw.headers, c.req.method, incoming.socket.localPort ?? 0), allowed);
    if (refusal) {
      refuse(c.req.method, c.req.path, refusal);
      return c.json({ detail: refusal.detail }, refusal.status);
    }
  }
  await next();
});
