/**
 * `fecr webhooks listen [--forward-to URL]`: receive the account's webhook deliveries here, print them as they
 * arrive and forward them to a receiver being developed (as `stripe listen` does).
 *
 * - A local HTTP receiver starts on --host (127.0.0.1) and --port (0: any free port).
 * - The account's webhook URL (the active profile's account, local or remote) is pointed at it, keeping the
 *   account's signing secret, so the forwarded `webhook-signature` verifies at the real receiver with the secret
 *   it already has. The previous URL is remembered and put back on exit (Ctrl-C, SIGTERM).
 * - Each delivery: one line on stdout (time in Costa Rica, estado from the MensajeHacienda, clave, webhook-id,
 *   and the forward's status and latency); --json prints one JSON object per line instead.
 * - The exact body and the Standard Webhooks headers are forwarded; the service gets the forward's status as the
 *   answer (so its retries see what the real receiver said), 502 when the forward fails, 200 without --forward-to.
 * - Local mode runs the service's worker in this process while listening, so deliveries (and the sends and polls
 *   that lead to them) happen even when no other fecr is running.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// A static import: this verb's file is itself loaded lazily. A lazy `import('undici')` is, in the bundle, a chunk that
// exports only `default` (undici is CommonJS), and `{ request }` of it was undefined (issue 38; test/bundle-lazy-imports).
import { request } from 'undici';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { info } from '../../cli/output.js';
import { safeJson, safeText } from '../../cli/safe-text.js';
import { waitForStopSignal } from '../../cli/signals.js';
import type { Backend } from '../../client/backend.js';
import { backendFor } from '../backend.js';

export interface ListenFlags {
  forwardTo?: string;
  port?: string;
  host?: string;
  publicUrl?: string;
  json?: boolean;
}

/** Headers passed on to --forward-to (the Standard Webhooks ones and the payload's type). */
const FORWARDED = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'];
/** Below the service's own 10 s wait for the answer, so it sees our 502 rather than a timeout. */
const FORWARD_TIMEOUT_MS = 9_000;
const ESTADOS: Record<number, string> = { 1: 'aceptado', 2: 'parcial', 3: 'rechazado' };

export interface DeliveryLine {
  time: string;
  webhookId: string | null;
  clave: string | null;
  mensaje: number | null;
  estado: string | null;
  forward: { url: string; status?: number; error?: string; ms: number } | null;
  /** The status this listener answered the service with. */
  answered: number;
}

function checkUrl(flag: string, value: string): URL {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new UsageError(`${flag} must be an http or https URL: ${value}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`${flag} must be an http or https URL: ${value}`);
  return u;
}

/** "2026-03-15 10:22:01" in America/Costa_Rica. */
function crTime(d: Date): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone: 'America/Costa_Rica',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  }).format(d);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** clave and Mensaje of a delivery's body (nulls when it is not the spec's payload). */
async function describePayload(body: Buffer): Promise<{ clave: string | null; mensaje: number | null }> {
  let clave: string | null = null;
  let mensaje: number | null = null;
  try {
    const p = JSON.parse(body.toString('utf8')) as { folioId?: unknown; folioDetails?: { encodedFile?: unknown }[] };
    if (typeof p.folioId === 'string') clave = p.folioId;
    const encoded = p.folioDetails?.[0]?.encodedFile;
    if (typeof encoded === 'string') {
      const { parseMensajeHaciendaXml } = await import('../../core/xml/parse-mensaje.js');
      const m = parseMensajeHaciendaXml(Buffer.from(encoded, 'base64').toString('utf8'));
      mensaje = m.mensaje;
      clave ??= m.clave;
    }
  } catch {
    // Printed as it is: the line shows what could be read.
  }
  return { clave, mensaje };
}

export async function listen(ctx: Ctx, f: ListenFlags): Promise<void> {
  const forwardTo = f.forwardTo !== undefined ? checkUrl('--forward-to', f.forwardTo).toString() : undefined;
  const port = f.port === undefined ? 0 : Number(f.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a whole number from 0 to 65535');
  const host = f.host ?? '127.0.0.1';
  if (f.publicUrl !== undefined) checkUrl('--public-url', f.publicUrl);

  const { BackendError } = await import('../../client/backend.js');
  let backend: Backend | undefined;
  let server: Server | undefined;
  let previous: string | null | undefined;
  let pointed = false;
  try {
    backend = await backendFor(ctx);
    const b = backend;

    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const body = await readBody(req);
      if (req.method !== 'POST') {
        res.statusCode = 405;
        res.end();
        return;
      }
      const at = ctx.now();
      const { clave, mensaje } = await describePayload(body);
      const webhookId = typeof req.headers['webhook-id'] === 'string' ? req.headers['webhook-id'] : null;
      let forward: DeliveryLine['forward'] = null;
      let answered = 200;
      if (forwardTo) {
        const headers: Record<string, string> = {};
        for (const h of FORWARDED) {
          const v = req.headers[h];
          if (typeof v === 'string') headers[h] = v;
        }
        const started = performance.now();
        try {
          const r = await request(forwardTo, { method: 'POST', headers, body, headersTimeout: FORWARD_TIMEOUT_MS, bodyTimeout: FORWARD_TIMEOUT_MS });
          await r.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
          forward = { url: forwardTo, status: r.statusCode, ms: Math.round(performance.now() - started) };
          answered = r.statusCode;
        } catch (e) {
          const err = e as { code?: unknown; message?: unknown };
          forward = { url: forwardTo, error: typeof err.code === 'string' ? err.code : String(err.message ?? e), ms: Math.round(performance.now() - started) };
          answered = 502;
        }
      }
      res.statusCode = answered;
      res.end();
      const line: DeliveryLine = { time: at.toISOString(), webhookId, clave, mensaje, estado: mensaje === null ? null : (ESTADOS[mensaje] ?? String(mensaje)), forward, answered };
      // What a delivery carries (clave, webhook-id, a forward's error) is outside text: through the sanitiser.
      if (f.json) writeLine(ctx.io.stdout, safeJson(line));
      else writeLine(ctx.io.stdout, safeText(textLine(crTime(at), line)));
    };

    server = createServer((req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
    });
    server.keepAliveTimeout = 1_000;
    const srv = server;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const local = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/`;
    const target = f.publicUrl ?? local;

    previous = await b.webhookUrl();
    const { secret } = await b.setWebhookUrl(target);
    pointed = true;
    await b.keepWorking();

    info(ctx, `Ready: listening on ${local}${f.publicUrl ? ` (the service delivers to ${f.publicUrl})` : ''}`);
    info(ctx, `the account's webhook URL now points here; it was ${previous ?? '(none)'} and is put back on exit (Ctrl-C)`);
    if (forwardTo) info(ctx, `forwarding each delivery to ${forwardTo}; the service gets its status as the answer`);
    if (secret) {
      // The account had no signing secret: this one is new and the receiver needs it to verify.
      info(ctx, `the account had no webhook signing secret; its new secret (shown only now): ${secret}`);
    }
    if (b.mode === 'remote' && !f.publicUrl && (host === '127.0.0.1' || host === 'localhost' || host === '::1')) {
      info(ctx, 'note: a hosted service reaches this address only if it runs on this machine; else use --public-url (a tunnel)');
    }

    await waitForStopSignal();
  } catch (e) {
    if (e instanceof BackendError) throw new UserError(e.message);
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new UserError(`cannot listen on ${host}:${port}: the port is in use`);
    throw e;
  } finally {
    try {
      if (pointed && backend && previous !== undefined) {
        try {
          await backend.setWebhookUrl(previous);
          info(ctx, `webhook URL put back: ${previous ?? '(none)'}`);
        } catch (e) {
          // The service may be gone before the listener (stopped first, or unreachable): say what is left to do.
          if (!(e instanceof BackendError)) throw e;
          info(ctx, `warning: the account's webhook URL still points here: putting back ${previous ?? '(none)'} failed (${e.message})`);
        }
      }
    } finally {
      const srv = server;
      if (srv?.listening) {
        srv.closeAllConnections();
        await new Promise<void>((resolve) => srv.close(() => resolve()));
      }
      await backend?.close();
    }
  }
}

function textLine(time: string, l: DeliveryLine): string {
  const what = `${time}  ${(l.estado ?? '?').padEnd(9)}  ${l.clave ?? '(no clave)'}  ${l.webhookId ?? '(no webhook-id)'}`;
  if (!l.forward) return `${what}  [${l.answered}]`;
  if (l.forward.error !== undefined) return `${what}  → ${l.forward.url} failed: ${l.forward.error} (${l.forward.ms} ms) [answered ${l.answered}]`;
  return `${what}  → ${l.forward.url} [${l.forward.status}] ${l.forward.ms} ms`;
}
