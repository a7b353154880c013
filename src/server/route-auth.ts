/**
 * Which requests of the client API need a bearer token, decided on the route the router matched (issue 37, point 1).
 *
 * The check used to be a string test of the raw URL (`req.url.startsWith('/api/')`), while the router (find-my-way)
 * decodes the path before matching it: `/%61pi/…` or `/ap%69/…` (or an absolute-form target, `http://host/api/…`)
 * reached the `/api/…` routes with no token. Now the decision is on what the router matched: `req.routeOptions`
 * is set before the onRequest hooks run (Fastify routes first, then runs onRequest, then reads and parses the body:
 * preParsing, preValidation, preHandler), so a 401 is sent before any byte of the body is read or any route work
 * is done. Default deny: every request is authenticated (an unmatched path too, which is then a 401 without a
 * token and a 404 with one), but those of a route whose config is PUBLIC_ROUTE: GET /openapi.json and Hacienda's
 * callback (which Hacienda posts without any scheme: hacienda-callback.ts). SERVICE-SPEC "Authentication" 5: a
 * missing, invalid or expired token is 401 `unauthorized`, "Token inválido o expirado", on all client-API endpoints.
 */
import type { FastifyRequest } from 'fastify';

/** The route config of a route served without a token (`app.get(path, { config: PUBLIC_ROUTE }, …)`). */
export const PUBLIC_ROUTE = { public: true } as const;

/** True when the router matched a route marked PUBLIC_ROUTE (never for an unmatched path: the 404 handler). */
export function isPublicRoute(req: FastifyRequest): boolean {
  if (req.routeOptions.url === undefined) return false;
  return (req.routeOptions.config as { public?: unknown } | undefined)?.public === true;
}
