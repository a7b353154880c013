// Issue 27, point 2, as use cases on either store (SQLite file; PostgreSQL in the "postgres" project): submitDocument
// numbers a body without numeroReferencia only when asked (local mode), concurrent submissions get distinct consecutive
// numbers, a batch row's submission key finds its document again, and the series' starts are checked against the
// numbers used. The hosted API (no assignNumber) keeps the spec's 400 for a body without numeroReferencia.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NumberTakenError, submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { issuerNumbers, setNumberStarts, StartBelowUsedError } from '../src/service/numbering.js';
import { ServiceError } from '../src/service/service-error.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { validInvoice } from './helpers/bodies.js';
import { makeTestIssuer } from './helpers/issuer.js';

let t: TestContext;
let account: number;
const ID = '3101123456';

beforeAll(async () => {
  t = await makeServiceContext();
  const now = Date.now();
  account = (
    await t.ctx.store.db
      .insertInto('accounts')
      .values({ base: 'numeracion', password_hash: 'x', disabled: 0, webhook_url: null, webhook_secret_enc: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  await registerIssuer(t.ctx, account, makeTestIssuer().issuer);
});
afterAll(async () => {
  await t.close();
});

function unnumbered(tipoDoc = '1', detalle = 'Servicio'): Record<string, unknown> {
  const { numeroReferencia: _n, ...body } = validInvoice();
  (body.detalleServicio as { detalle: string }[])[0]!.detalle = detalle;
  return tipoDoc === '1' ? body : { ...body, tipoDoc };
}
const numberOf = (clave: string) => Number(clave.slice(31, 41));

describe('numbering in the service', () => {
  it('without assignNumber (the hosted API) a body without numeroReferencia is the spec\'s 400 naming it; nothing stored', async () => {
    const e = await submitDocument(t.ctx, account, unnumbered()).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).status).toBe(400);
    expect((e as ServiceError).message).toBe('Campos requeridos faltantes');
    expect((e as ServiceError).details).toEqual([expect.objectContaining({ path: 'numeroReferencia' })]);
    expect((await issuerNumbers(t.ctx, account, ID)).series[0]).toMatchObject({ kind: 'FE', last: null, next: 1 });
  });

  it('twelve concurrent submissions get 1..12, each number once, and the next free number is 13', async () => {
    // The service's log says when a submission lost its number to a concurrent one and signed again.
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const ctx = { ...t.ctx, logger };
    const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => submitDocument(ctx, account, unnumbered('1', `Servicio ${i}`), { assignNumber: true })));
    // They did race: at least one lost its first number (they all read the series before any was stored).
    expect(lines.filter((l) => l.includes('taken by a concurrent submission')).length).toBeGreaterThan(0);
    expect(rs.every((r) => r.created)).toBe(true);
    expect(rs.map((r) => numberOf(r.clave)).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect((await issuerNumbers(t.ctx, account, ID)).series[0]).toMatchObject({ kind: 'FE', sucursal: 1, terminal: 1, last: 12, next: 13 });
  });

  it('a series continues after the highest number stored, explicit ones included', async () => {
    const explicit = await submitDocument(t.ctx, account, { ...unnumbered('1', 'Explícito'), numeroReferencia: 40 }, { assignNumber: true });
    expect(numberOf(explicit.clave)).toBe(40);
    const next = await submitDocument(t.ctx, account, unnumbered('1', 'Después'), { assignNumber: true });
    expect(numberOf(next.clave)).toBe(41);
  });

  it('"the same body": the canonical JSON with the number fecr took (key order aside); another body under it → NumberTakenError with the holder and the next free number', async () => {
    const first = await submitDocument(t.ctx, account, unnumbered('1', 'Canónico'), { assignNumber: true });
    const n = numberOf(first.clave);
    const reordered = Object.fromEntries(Object.entries({ ...unnumbered('1', 'Canónico'), numeroReferencia: n }).reverse());
    expect(await submitDocument(t.ctx, account, reordered, { assignNumber: true })).toEqual({ clave: first.clave, created: false, documentId: first.documentId });
    const e = await submitDocument(t.ctx, account, { ...unnumbered('1', 'Otro contenido'), numeroReferencia: n }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(NumberTakenError);
    expect(e).toMatchObject({ status: 400, numero: n, kind: 'FE', sucursal: 1, terminal: 1, clave: first.clave, next: n + 1 });
    // The API's words (Spanish, the spec's error body) name them too.
    expect((e as Error).message).toContain(`(clave ${first.clave}); el siguiente número libre es ${n + 1}`);
  });

  it('a batch row\'s submission key finds its document again: same clave, no new number', async () => {
    const key = 'batch-row-key-1';
    const a = await submitDocument(t.ctx, account, unnumbered('1', 'Fila de lote'), { assignNumber: true, submissionKey: key });
    const before = (await issuerNumbers(t.ctx, account, ID)).series[0]!.next;
    const b = await submitDocument(t.ctx, account, unnumbered('1', 'Fila de lote'), { assignNumber: true, submissionKey: key });
    expect(b).toEqual({ clave: a.clave, created: false, documentId: a.documentId });
    expect((await issuerNumbers(t.ctx, account, ID)).series[0]!.next).toBe(before);
  });

  it('each kind has its own series; a start is refused at or below a number used, naming it', async () => {
    const e = await setNumberStarts(t.ctx, account, ID, [{ kind: 'FE', next: 10 }]).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(StartBelowUsedError);
    const fe = (await issuerNumbers(t.ctx, account, ID)).series.find((s) => s.kind === 'FE')!;
    expect(e).toMatchObject({ status: 400, requested: 10, highest: fe.last });
    const r = await setNumberStarts(t.ctx, account, ID, [{ kind: 'TE', next: 500 }]);
    expect(r.series.find((s) => s.kind === 'TE')).toEqual({ kind: 'TE', sucursal: 1, terminal: 1, last: null, start: 500, next: 500 });
    const te = await submitDocument(t.ctx, account, { ...unnumbered('4'), receptor: '' }, { assignNumber: true });
    expect(numberOf(te.clave)).toBe(500);
    expect(te.clave.slice(29, 31)).toBe('04');
  });
});
