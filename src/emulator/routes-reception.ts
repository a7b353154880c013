/**
 * Reception API routes (NOTES §4.3-4.5), mounted under `/recepcion/v1` (production, realm rut) and
 * `/recepcion-sandbox/v1` (sandbox, realm rut-stag).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorIdp } from './idp.js';
import type { ReceptionProcessor } from './processor.js';
import { consecutivoClaim, statusBody } from './processor.js';
import { parseRecepcionPost } from './request-body.js';
import type { EmulatorEnvironment, EmulatorStore, ReceptionRecord } from './store.js';
import { IssuerQuota, type FaultConfig } from './faults.js';

export const RECEPTION_BASES: readonly [string, EmulatorEnvironment][] = [
  ['/recepcion/v1', 'production'],
  ['/recepcion-sandbox/v1', 'sandbox'],
];

export interface ReceptionRouteDeps {
  store: EmulatorStore;
  idp: EmulatorIdp;
  processor: ReceptionProcessor;
  now: () => number;
  faults: () => FaultConfig;
  baseUrl: () => string;
  /** Called for each answer a sandbox fault decided: a 404 of the index delay, a 429 of the per-issuer quota. */
  onFault?: (fault: 'indexDelay' | 'quota') => void;
}

/** Header values must be Latin-1 without control characters. */
export function headerText(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/[^\u0020-\u00ff]/g, '?').slice(0, 1000);
}

function fail(reply: FastifyReply, status: number, cause: string, validation = false): FastifyReply {
  reply.code(status).header('x-error-cause', headerText(cause));
  if (validation) reply.header('validation-exception', 'true');
  return reply.send();
}

/** Bearer check: 401 for a missing/invalid/expired token, 403 for a token of another realm or a forbidden user. */
async function authenticate(req: FastifyRequest, reply: FastifyReply, env: EmulatorEnvironment, deps: ReceptionRouteDeps): Promise<string | undefined> {
  const h = req.headers.authorization;
  const m = h ? /^bearer\s+(\S+)\s*$/i.exec(h) : null;
  if (!m) {
    reply.header('www-authenticate', 'Bearer');
    fail(reply, 401, 'Se requiere un token de acceso (Authorization: bearer <token>).');
    return undefined;
  }
  const check = await deps.idp.checkAccess(m[1]!);
  if (!check.ok) {
    reply.header('www-authenticate', `Bearer error="invalid_token", error_description="${headerText(check.reason).replace(/"/g, "'")}"`);
    fail(reply, 401, `Token no válido: ${check.reason}.`);
    return undefined;
  }
  if (check.realm.environment !== env) {
    fail(reply, 403, `El token fue emitido para el ambiente ${check.realm.environment} (realm ${check.realm.realm}) y no tiene permiso en este ambiente.`);
    return undefined;
  }
  if (deps.faults().forbiddenUsers.includes(check.username)) {
    fail(reply, 403, `El usuario ${check.username} no tiene permiso para usar la API de comprobantes electrónicos.`);
    return undefined;
  }
  return check.username;
}

function party(p: { tipoIdentificacion: string; numeroIdentificacion: string }, nombre: string | undefined) {
  return { tipoIdentificacion: p.tipoIdentificacion, numeroIdentificacion: p.numeroIdentificacion, nombre: nombre ?? '' };
}

function comprobanteItem(rec: ReceptionRecord, all: ReceptionRecord[]): Record<string, unknown> {
  const refs = (tipo: string) =>
    all
      .filter((o) => o.tipoComprobante === tipo && o.estado === 'aceptado' && o.referencias?.some((r) => r.numero === rec.clave))
      .map((o) => ({ clave: o.clave, fecha: o.fecha }));
  const item: Record<string, unknown> = { clave: rec.clave, fecha: rec.fecha, emisor: party(rec.emisor, rec.nombreEmisor) };
  if (rec.receptor) item['receptor'] = party(rec.receptor, rec.nombreReceptor);
  item['notasCredito'] = refs('03');
  item['notasDebito'] = refs('02');
  return item;
}

/** `02003101123456`: tipo (2) + número left-padded to 12. */
function idFilter(p: { tipoIdentificacion: string; numeroIdentificacion: string }): string {
  return p.tipoIdentificacion + p.numeroIdentificacion.padStart(12, '0');
}

export function registerReceptionRoutes(app: FastifyInstance, deps: ReceptionRouteDeps): void {
  const { store, processor } = deps;
  const quota = new IssuerQuota();
  /** Index-delay fault: a document received less than indexDelayMs ago is not found by the queries yet. */
  const indexed = (rec: ReceptionRecord, count = false): boolean => {
    const delay = deps.faults().indexDelayMs;
    if (delay <= 0 || deps.now() - rec.receivedAt >= delay) return true;
    if (count) deps.onFault?.('indexDelay');
    return false;
  };
  const notFound = (reply: FastifyReply, clave: string) => fail(reply, 404, `No existe el recurso con Clave = [${clave}]`);
  for (const [base, env] of RECEPTION_BASES) {
    app.post(`${base}/recepcion`, async (req, reply) => {
      const username = await authenticate(req, reply, env, deps);
      if (!username) return reply;
      const parsed = parseRecepcionPost(req.body);
      if (typeof parsed === 'string') return fail(reply, 400, parsed, true);
      const limit = deps.faults().quotaPerMinute;
      if (limit > 0) {
        // Per-issuer quota fault: counted per environment and emisor, before any processing.
        const q = quota.take(`${env}\u0000${parsed.emisor.numeroIdentificacion}`, limit, deps.now());
        reply.header('x-ratelimit-limit', String(q.limit)).header('x-ratelimit-remaining', String(q.remaining)).header('x-ratelimit-reset', String(q.resetSec));
        if (!q.ok) {
          deps.onFault?.('quota');
          return reply
            .code(429)
            .header('retry-after', String(q.retryAfterSec))
            .header(
              'x-error-cause',
              headerText(`El emisor ${parsed.emisor.numeroIdentificacion} superó el límite de ${limit} comprobantes por minuto; intente de nuevo en ${q.retryAfterSec} segundos.`),
            )
            .send({ error: 'Too Many Requests' });
        }
      }
      const key = parsed.consecutivoReceptor ? `${parsed.clave}-${parsed.consecutivoReceptor}` : parsed.clave;
      const now = deps.now();
      const rec: ReceptionRecord = {
        environment: env,
        key,
        clave: parsed.clave,
        fecha: parsed.fecha,
        emisor: parsed.emisor,
        username,
        xml: parsed.xml,
        estado: 'recibido',
        receivedAt: now,
        updatedAt: now,
        acceptedPosts: 1,
        duplicatePosts: 0,
      };
      if (parsed.receptor) rec.receptor = parsed.receptor;
      if (parsed.callbackUrl) rec.callbackUrl = parsed.callbackUrl;
      if (parsed.consecutivoReceptor) rec.consecutivoReceptor = parsed.consecutivoReceptor;
      if (!store.insertReception(rec)) {
        store.incrementDuplicates(env, key);
        return fail(reply, 400, `El comprobante con la Clave [${key}] ya fue recibido anteriormente.`);
      }
      const claim = consecutivoClaim(rec);
      if (claim) store.claimConsecutivo(env, claim.issuer, claim.consecutivo, key);
      processor.schedule(rec);
      return reply.code(202).header('location', `${deps.baseUrl()}${base}/recepcion/${key}`).send();
    });

    app.get<{ Params: { clave: string } }>(`${base}/recepcion/:clave`, async (req, reply) => {
      const username = await authenticate(req, reply, env, deps);
      if (!username) return reply;
      const rec = store.getReception(env, req.params.clave);
      if (!rec || !indexed(rec, true)) return notFound(reply, req.params.clave);
      return reply.code(200).send(statusBody(rec));
    });

    app.get<{ Querystring: Record<string, string | undefined> }>(`${base}/comprobantes`, async (req, reply) => {
      const username = await authenticate(req, reply, env, deps);
      if (!username) return reply;
      const q = req.query;
      const offsetGiven = q['offset'] !== undefined;
      const limitGiven = q['limit'] !== undefined;
      const offset = Number(q['offset'] ?? 0);
      const limit = Number(q['limit'] ?? 50);
      if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit < 1) {
        return fail(reply, 400, 'Los parámetros offset y limit deben ser enteros positivos.', true);
      }
      const all = store.listReceptions({ environment: env });
      let docs = all.filter((r) => r.username === username && !r.consecutivoReceptor && indexed(r));
      if (q['emisor']) docs = docs.filter((r) => idFilter(r.emisor) === q['emisor']);
      if (q['receptor']) docs = docs.filter((r) => r.receptor && idFilter(r.receptor) === q['receptor']);
      docs.sort((a, b) => b.receivedAt - a.receivedAt || (a.key < b.key ? -1 : 1));
      const take = Math.min(limit, 50);
      const page = docs.slice(offset, offset + take);
      reply.header('accept-range', 'resource 50');
      if (offsetGiven || limitGiven) {
        reply.code(206).header('content-range', `${offset}-${offset + page.length}/${docs.length}`);
      } else reply.code(200);
      return reply.send(page.map((r) => comprobanteItem(r, all)));
    });

    app.get<{ Params: { clave: string } }>(`${base}/comprobantes/:clave`, async (req, reply) => {
      const username = await authenticate(req, reply, env, deps);
      if (!username) return reply;
      const rec = store.getReception(env, req.params.clave);
      if (!rec || rec.consecutivoReceptor || !indexed(rec, true)) return notFound(reply, req.params.clave);
      return reply.code(200).send(comprobanteItem(rec, store.listReceptions({ environment: env })));
    });
  }
}
