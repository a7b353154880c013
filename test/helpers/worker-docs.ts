// What the worker tests share: the bodies of the three kinds they send, fast worker timings, a document signed and
// stored with its send job as submitDocument stores it (without its checks, so a test can alter the clave), and a
// promise with a deadline.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseConsecutivo, securityCodeFrom } from '../../src/core/clave.js';
import { issueComprobante } from '../../src/core/comprobante.js';
import { money } from '../../src/core/money.js';
import type { ServiceContext } from '../../src/service/context.js';
import type { WorkerOptions } from '../../src/service/delivery/worker.js';
import { enqueueJob } from '../../src/store/jobs.js';
import { validInvoice } from './bodies.js';
import type { TestIssuer } from './issuer.js';

const FIXTURES = new URL('../../fixtures/documents/', import.meta.url);
export const fixture = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, any>;

export const BODIES = {
  FE: () => validInvoice(),
  NC: () => fixture('09-nc-devolucion.json'),
  TE: () => fixture('10-te-sin-receptor.json'),
};
export type Kind = keyof typeof BODIES;

/** Worker timings for tests: polls and backoffs in tens of milliseconds. */
export const FAST_WORKER: WorkerOptions = {
  pollIntervalMs: 10,
  firstPollDelayMs: 30,
  pollMaxIntervalMs: 200,
  sendBackoffBaseMs: 20,
  sendBackoffMaxMs: 200,
  webhookBackoffBaseMs: 20,
  webhookBackoffMaxMs: 200,
  haciendaRetry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 30, maxServerWaitMs: 2_000 },
};

export interface DocumentEnv {
  ctx: ServiceContext;
  accountId: number;
  issuerId: number;
}

/** Signs `body` with the test issuer and stores it with its `send` job in one transaction, as submitDocument does. */
export async function storeSigned(env: DocumentEnv, issuer: TestIssuer, body: Record<string, any>, opts: { claveOverride?: string } = {}): Promise<{ id: number; clave: string }> {
  const r = issueComprobante(body, issuer.issuer, issuer.creds, {
    securityCode: securityCodeFrom((n) => randomBytes(n)),
    signingTime: new Date(),
    newId: () => randomBytes(8).toString('hex'),
  });
  if (!r.ok) throw new Error(JSON.stringify(r.findings));
  const parts = parseConsecutivo(r.doc.numeroConsecutivo)!;
  const now = env.ctx.now();
  const clave = opts.claveOverride ?? r.doc.clave;
  const id = await env.ctx.store.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('documents')
      .values({
        account_id: env.accountId,
        issuer_id: env.issuerId,
        clave,
        kind: r.doc.kind,
        sucursal: Number(parts.sucursal),
        terminal: Number(parts.terminal),
        numero_referencia: Number(body['numeroReferencia']),
        body_hash: createHash('sha256').update(JSON.stringify(body)).digest('hex'),
        state: 'pendiente',
        xml: r.xml,
        response_xml: null,
        mensaje: null,
        detalle_mensaje: null,
        fecha_emision: r.doc.fechaEmision,
        total_comprobante: money(r.totals.resumen.totalComprobante),
        moneda: r.doc.moneda.codigoMoneda,
        receptor_nombre: r.doc.receptor?.nombre ?? null,
        created_at: now,
        updated_at: now,
        decided_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await enqueueJob(trx, { type: 'send', document_id: row.id, run_at: now }, now);
    return row.id;
  });
  return { id, clave };
}

export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)))]);
  } finally {
    clearTimeout(t);
  }
}
