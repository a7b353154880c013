// `POST /api/enviar/correo {claveHacienda, correos?}` over HTTP (issue 17): the client API on 127.0.0.1:0 with real
// RS256 tokens, a real SQLite file, the Hacienda emulator and a real SMTP server (smtp-server on 127.0.0.1:0, in this
// process). Bad input is the spec's error body (400 bad_request naming the field path; malformed JSON too), an unknown
// clave or another account's document is 404 not_found, a document Hacienda has not accepted yet is 400 saying so
// (never 500, nothing queued); a good request answers the new mail (pendiente, reenvio) and the worker delivers it to
// the SMTP server with the three attachments equal to the stored XML, PDF and MensajeHacienda.
import { simpleParser } from 'mailparser';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { mailStatusOf } from '../src/service/delivery/email.js';
import { startWorker, type Worker } from '../src/service/delivery/worker.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { getFile } from '../src/service/files.js';
import { changeMailAllowList } from '../src/service/mail-settings.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { closeLookups } from '../src/service/lookups.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';
import { BODIES, FAST_WORKER, withTimeout } from './helpers/worker-docs.js';

const AUTH_URL = 'http://auth.fecr.test';
const MISSING = 'Campos requeridos faltantes';

let emu: RunningEmulator;
let smtp: TestSmtp;
let t: TestContext;
let ctx: ServiceContext;
let app: ReturnType<typeof buildApiApp>;
let baseUrl: string;
let tokenA: string;
let tokenB: string;
let accountA: number;
let worker: Worker | undefined;
let seq = 7100;
/** Every response body, to look for a 500 or a stack. */
const seen: { status: number; text: string }[] = [];

async function post(body: unknown, opts: { token?: string; raw?: string; url?: string } = {}): Promise<{ status: number; body: any }> {
  const res = await request(`${opts.url ?? baseUrl}/api/enviar/correo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.token ?? tokenA}`, 'content-type': 'application/json' },
    body: opts.raw ?? JSON.stringify(body),
  });
  const text = await res.body.text();
  seen.push({ status: res.statusCode, text });
  return { status: res.statusCode, body: JSON.parse(text) };
}

async function submit(accountId: number, extra: Record<string, unknown> = {}): Promise<{ clave: string; documentId: number }> {
  return submitDocument(ctx, accountId, { ...BODIES.FE(), numeroReferencia: ++seq, ...extra });
}

async function until<T>(check: () => Promise<T | undefined>, what = 'the condition', ms = 20_000): Promise<T> {
  return withTimeout(
    (async () => {
      for (;;) {
        const v = await check();
        if (v !== undefined) return v;
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    ms,
    what,
  );
}

const emailRows = async () => ctx.store.db.selectFrom('email_deliveries').selectAll().orderBy('id').execute();

beforeAll(async () => {
  emu = await startEmulator({ processingDelayMs: 20 });
  smtp = await startTestSmtp();
  t = await makeServiceContext({ haciendaUrl: emu.url });
  ctx = {
    ...t.ctx,
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emu.url }) },
    mail: { outboxDir: `${t.dir}/outbox`, smtp: { host: '127.0.0.1', port: smtp.port, security: 'none' }, fromAddress: 'facturas@fecr.test' },
  };
  await ensureSigningKey(ctx);
  const issuer = makeTestIssuer();
  const a = await createAccount(ctx, { base: 'correo-a', password: 'contrasena-a-123' });
  await createAccount(ctx, { base: 'correo-b', password: 'contrasena-b-123' });
  accountA = a.account.id;
  await registerIssuer(ctx, accountA, { ...issuer.issuer });
  // (B registers no issuer: a cédula is an issuer of one account of a service, issue 36.)
  tokenA = (await issueToken(ctx, { base: 'correo-a' }, { issuer: AUTH_URL })).token;
  tokenB = (await issueToken(ctx, { base: 'correo-b' }, { issuer: AUTH_URL })).token;
  app = buildApiApp(ctx, { authenticate: createTokenVerifier(ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
}, 60_000);

afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await closeLookups(ctx);
  await smtp?.close();
  await t?.close();
  await emu?.close();
});

describe('POST /api/enviar/correo', () => {
  let pending: { clave: string; documentId: number };

  it('bad input: 400 bad_request with the field path, never 500', async () => {
    const cases: [unknown, string][] = [
      [{}, 'claveHacienda'],
      [{ claveHacienda: '' }, 'claveHacienda'],
      [{ claveHacienda: '   ' }, 'claveHacienda'],
      [{ claveHacienda: 50621112600310112345600100001010000000001100000001 }, 'claveHacienda'],
      [{ claveHacienda: null }, 'claveHacienda'],
      [{ claveHacienda: '5'.repeat(50), correos: 'cliente@correo.cr' }, 'correos'],
      [{ claveHacienda: '5'.repeat(50), correos: ['cliente@correo.cr', 5] }, 'correos[1]'],
      [{ claveHacienda: '5'.repeat(50), correos: Array.from({ length: 11 }, (_, i) => `c${i}@correo.cr`) }, 'correos'],
      [[], '(body)'],
    ];
    for (const [body, path] of cases) {
      const r = await post(body);
      expect([JSON.stringify(body), r.status, r.body.error, r.body.message]).toEqual([JSON.stringify(body), 400, 'bad_request', MISSING]);
      expect(r.body.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toContain(path);
    }
    const malformed = await post(undefined, { raw: '{"claveHacienda": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: 'bad_request', details: [{ path: '(body)' }] });
    expect(await emailRows()).toEqual([]);
  });

  it('an unknown clave, a string that is no clave, another account’s document: 404 not_found', async () => {
    const mine = await submit(accountA);
    pending = mine;
    for (const claveHacienda of ['5'.repeat(50), 'no-es-una-clave', `${mine.clave.slice(0, 49)}${mine.clave.endsWith('9') ? '8' : '9'}`]) {
      const r = await post({ claveHacienda });
      expect([claveHacienda, r.status, r.body]).toEqual([claveHacienda, 404, { error: 'not_found', message: 'Documento no encontrado para la clave proporcionada' }]);
    }
    const foreign = await post({ claveHacienda: mine.clave }, { token: tokenB });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('not_found');
  });

  it('a document not yet aceptado: 400 saying so at claveHacienda, nothing queued', async () => {
    expect((await getDocument(ctx, accountA, pending.clave))?.state).not.toBe('aceptado');
    const r = await post({ claveHacienda: pending.clave, correos: ['cliente@correo.cr'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toMatch(new RegExp(`^El documento ${pending.clave} no ha sido aceptado por Hacienda \\(estado \\w+\\); solo un comprobante aceptado se envía por correo$`));
    expect(r.body.details).toEqual([{ path: 'claveHacienda', message: expect.stringMatching(/^estado \w+, no aceptado$/) }]);
    expect(await emailRows()).toEqual([]);
  });

  it('aceptado: the mail is queued (pendiente, reenvio) and delivered to the SMTP server with the three files', async () => {
    worker = startWorker(ctx, { ...FAST_WORKER, emailBackoffBaseMs: 20, emailBackoffMaxMs: 100 });
    worker.wake();
    const doc = await until(async () => {
      const d = await getDocument(ctx, accountA, pending.clave);
      return d?.state === 'aceptado' ? d : undefined;
    });
    // The automatic mail to the receptor first (one, to the body's address).
    await until(async () => ((await mailStatusOf(ctx, [doc.id])).get(doc.id)?.estado === 'enviado' ? true : undefined));
    expect(smtp.received).toHaveLength(1);

    const bad = await post({ claveHacienda: pending.clave, correos: ['cliente@correo.cr', 'no-es-correo'] });
    expect([bad.status, bad.body.error, bad.body.details]).toEqual([400, 'bad_request', [{ path: 'correos[1]', message: 'must be an e-mail address' }]]);

    // Addresses other than the document's recipients: only those the operator registered for the account (issue 25;
    // before it, any account mailed any address: test/server-api-correo-relay.test.ts).
    const foreign = await post({ claveHacienda: pending.clave, correos: ['contabilidad@cliente.cr', 'gerencia@cliente.cr'] });
    expect([foreign.status, foreign.body.error, foreign.body.details.map((d: { path: string }) => d.path)]).toEqual([400, 'bad_request', ['correos[0]', 'correos[1]']]);
    await changeMailAllowList(ctx, 'correo-a', { allow: ['contabilidad@cliente.cr', 'gerencia@cliente.cr'] });
    const r = await post({ claveHacienda: ` ${pending.clave} `, correos: ['contabilidad@cliente.cr', 'Contabilidad@cliente.cr', 'gerencia@cliente.cr'] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      status: 'success',
      data: {
        estado: 'pendiente',
        destinatarios: ['contabilidad@cliente.cr', 'gerencia@cliente.cr'],
        motivo: 'reenvio',
        intentos: 0,
        ultimaRespuesta: null,
        messageId: expect.stringMatching(new RegExp(`^<${pending.clave}\\.[0-9a-f]{12}@fecr\\.email>$`)),
        creadoAt: expect.any(String),
        enviadoAt: null,
      },
    });
    worker.wake();
    await until(async () => (smtp.received.length === 2 ? true : undefined));
    const got = smtp.received[1]!;
    expect(got.to).toEqual(['contabilidad@cliente.cr', 'gerencia@cliente.cr']);
    const parsed = await simpleParser(got.raw);
    expect(parsed.messageId).toBe(r.body.data.messageId);
    const stored = async (tipo: 'xml' | 'pdf' | 'respuesta') => Buffer.from((await getFile(ctx, accountA, pending.clave, tipo))!.encodedFile, 'base64');
    const byName = (n: string) => parsed.attachments.find((a) => a.filename === n)!.content;
    expect(parsed.attachments.map((a) => a.filename).sort()).toEqual([`${pending.clave}.pdf`, `${pending.clave}.xml`, `${pending.clave}_respuesta.xml`]);
    expect(byName(`${pending.clave}.xml`).equals(await stored('xml'))).toBe(true);
    expect(byName(`${pending.clave}.pdf`).equals(await stored('pdf'))).toBe(true);
    expect(byName(`${pending.clave}_respuesta.xml`).equals(await stored('respuesta'))).toBe(true);
    // Without correos: to the document's stored recipient.
    const again = await post({ claveHacienda: pending.clave });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ estado: 'pendiente', motivo: 'reenvio', destinatarios: ['proveedores@bncr.fi.cr'] });
    expect(again.body.data.messageId).not.toBe(r.body.data.messageId);
    worker.wake();
    await until(async () => (smtp.received.length === 3 ? true : undefined));
    expect(smtp.received[2]!.to).toEqual(['proveedores@bncr.fi.cr']);
  });

  it('no answer was a 500 nor carried a stack', () => {
    expect(seen.length).toBeGreaterThan(15);
    for (const s of seen) {
      expect(s.status).toBeLessThan(500);
      expect(s.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
    }
  });
});
