// `POST /api/enviar/correo` is no mail relay (issue 25, point 1). Over HTTP with real RS256 tokens, the Hacienda
// emulator, a real SQLite file (or PostgreSQL in the postgres project) and a real SMTP server (smtp-server on
// 127.0.0.1:0): 100 concurrent requests, each naming 10 foreign addresses, deliver nothing to any of them (60 refused
// with 400 and a finding per address, the other 40 answered 429 with Retry-After: the account's limit); the document's
// receptor and correosAdicionales are delivered, five resends a day per document, then 429; an address the operator
// registered for the account is delivered, and no other; every mail the SMTP server receives has the operator's
// sender as its envelope From (MAIL FROM) and header From, the issuer's name as display name and the issuer's address
// (any domain) as Reply-To; each refusal is logged without the refused address's local part nor the token. A
// service whose SMTP server has no sender configured sends nothing: the automatic mail is fallido, a resend a 400.
// The operator (the CLI's local mode) mails whom it names, past the API's limits.
import { Writable } from 'node:stream';
import { simpleParser } from 'mailparser';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { buildApiApp } from '../src/server/api-app.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { mailStatusOf, requestMail } from '../src/service/delivery/email.js';
import { startWorker, type Worker } from '../src/service/delivery/worker.js';
import { getDocument, submitDocument } from '../src/service/documents.js';
import { registerIssuer } from '../src/service/issuers.js';
import { ensureSigningKey } from '../src/service/keys.js';
import { closeLookups } from '../src/service/lookups.js';
import { changeMailAllowList } from '../src/service/mail-settings.js';
import { createTokenVerifier, issueToken } from '../src/service/tokens.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';
import { BODIES, FAST_WORKER, withTimeout } from './helpers/worker-docs.js';

const AUTH_URL = 'http://auth.fecr.test';
const OPERATOR = 'facturas@operador.test';
const RECEPTOR = 'proveedores@bncr.fi.cr';
const ISSUER_NAME = 'SOFTWARE TICO SOCIEDAD ANONIMA';
/** The address the tenant wrote in its issuer record: any domain. */
const TENANT_ADDRESS = 'gerencia@banco-ajeno.test';
const REFUSED = 'Solo se envía correo a los destinatarios del documento o a las direcciones que el operador registró para la cuenta';

let emu: RunningEmulator;
let issuer: TestIssuer;
let seq = 8100;
/** Each account's issuer (account id → cédula). */
const cedulas = new Map<number, string>();

beforeAll(async () => {
  issuer = makeTestIssuer();
  emu = await startEmulator({ processingDelayMs: 20 });
});
afterAll(async () => {
  await emu?.close();
});

/** A service with the client API on 127.0.0.1:0, its worker and its log lines. */
interface Env {
  t: TestContext;
  ctx: ServiceContext;
  app: ReturnType<typeof buildApiApp>;
  baseUrl: string;
  worker: Worker;
  logText: () => string;
  account(base: string, issuerAddress?: string): Promise<{ id: number; token: string }>;
  close(): Promise<void>;
}

async function makeEnv(smtp: TestSmtp, sender: { fromAddress?: string }): Promise<Env> {
  const t = await makeServiceContext({ haciendaUrl: emu.url });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const ctx: ServiceContext = {
    ...t.ctx,
    logger: pino({ level: 'info' }, sink),
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emu.url }) },
    mail: { outboxDir: `${t.dir}/outbox`, smtp: { host: '127.0.0.1', port: smtp.port, security: 'none' }, ...sender },
  };
  await ensureSigningKey(ctx);
  const app = buildApiApp(ctx, { authenticate: createTokenVerifier(ctx, { issuer: AUTH_URL, jwks: 'local' }) });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const worker = startWorker(ctx, { ...FAST_WORKER, emailBackoffBaseMs: 20, emailBackoffMaxMs: 100 });
  return {
    t,
    ctx,
    app,
    baseUrl,
    worker,
    logText: () => lines.join('\n'),
    async account(base, issuerAddress = TENANT_ADDRESS) {
      const { account } = await createAccount(ctx, { base, password: 'contrasena-123456' });
      // Each account is a taxpayer of its own: one cédula numbers in one account of a service (issue 36, item 6).
      const cedula = String(3101700000 + account.id);
      const p12 = createTestP12({ id: cedula, type: '02', pin: issuer.issuer.pinCertificado, name: issuer.issuer.nombre });
      await registerIssuer(ctx, account.id, { ...issuer.issuer, identificacion: cedula, certificadoHacienda: p12.toString('base64'), correoElectronico: issuerAddress });
      cedulas.set(account.id, cedula);
      return { id: account.id, token: (await issueToken(ctx, { base }, { issuer: AUTH_URL })).token };
    },
    async close() {
      await worker.stop();
      await app.close();
      await closeLookups(ctx);
      await t.close();
    },
  };
}

function logsOf(env: Env): Record<string, any>[] {
  return env
    .logText()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
}

async function post(env: Env, token: string, body: unknown): Promise<{ status: number; body: any; retryAfter: string | undefined }> {
  const res = await request(`${env.baseUrl}/api/enviar/correo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  const ra = res.headers['retry-after'];
  return { status: res.statusCode, body: JSON.parse(text), retryAfter: Array.isArray(ra) ? ra[0] : ra };
}

async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
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

/** A document sent, aceptado, and its automatic mail settled. */
async function accepted(env: Env, accountId: number, extra: Record<string, unknown> = {}): Promise<{ clave: string; documentId: number }> {
  const r = await submitDocument(env.ctx, accountId, { ...BODIES.FE(), emisor: cedulas.get(accountId), numeroReferencia: ++seq, ...extra });
  env.worker.wake();
  await until(async () => ((await getDocument(env.ctx, accountId, r.clave))?.state === 'aceptado' ? true : undefined), 'aceptado');
  await until(async () => {
    const m = (await mailStatusOf(env.ctx, [r.documentId])).get(r.documentId);
    return m && m.estado !== 'pendiente' ? true : undefined;
  }, 'the automatic mail');
  return r;
}

/** Every queued mail sent (or failed). */
async function drained(env: Env): Promise<void> {
  env.worker.wake();
  await until(async () => {
    const open = await env.ctx.store.db.selectFrom('email_deliveries').select('id').where('state', '=', 'pendiente').execute();
    return open.length === 0 ? true : undefined;
  }, 'every mail sent');
}

const reenvios = async (env: Env, documentId: number) =>
  env.ctx.store.db.selectFrom('email_deliveries').selectAll().where('document_id', '=', documentId).where('reason', '=', 'reenvio').execute();

describe('the API mails only the receptor and the registered addresses, within limits, From the operator', () => {
  let smtp: TestSmtp;
  let env: Env;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    env = await makeEnv(smtp, { fromAddress: OPERATOR });
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await smtp?.close();
  });

  it('100 requests × 10 foreign addresses: none delivered; 60 refused (400, a finding per address), 40 answered 429 with Retry-After', async () => {
    const a = await env.account('relay-a');
    const doc = await accepted(env, a.id);
    const before = smtp.received.length;
    const t0 = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => post(env, a.token, { claveHacienda: doc.clave, correos: Array.from({ length: 10 }, (_, j) => `victima${i}.${j}@ajeno${j}.test`) })),
    );
    const ms = Date.now() - t0;
    const by = (s: number) => answers.filter((r) => r.status === s);
    expect(answers.map((r) => r.status).filter((s) => s !== 400 && s !== 429), `statuses in ${ms} ms`).toEqual([]);
    expect(by(400)).toHaveLength(60);
    expect(by(429)).toHaveLength(40);
    for (const r of by(400)) {
      expect(r.body.error).toBe('bad_request');
      expect(r.body.message).toBe(REFUSED);
      expect(r.body.details.map((d: { path: string }) => d.path)).toEqual(Array.from({ length: 10 }, (_, j) => `correos[${j}]`));
    }
    for (const r of by(429)) {
      expect(r.body).toEqual({ error: 'too_many_requests', message: 'Demasiados envíos de correo desde esta cuenta; intente de nuevo más tarde' });
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(Number(r.retryAfter)).toBeGreaterThan(3500);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(3600);
    }
    expect(await reenvios(env, doc.documentId)).toEqual([]);
    await drained(env);
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.received.length).toBe(before);
    expect(smtp.received.flatMap((m) => m.to).filter((to) => /ajeno\d\.test$/.test(to))).toEqual([]);

    // The account's budget is spent: even its receptor waits, and Retry-After says how long.
    const spent = await post(env, a.token, { claveHacienda: doc.clave });
    expect([spent.status, spent.body.error]).toEqual([429, 'too_many_requests']);
    // As if that many seconds had passed (the ledger moved back: PostgreSQL's queue runs on the database's clock).
    await env.ctx.store.db
      .updateTable('mail_requests')
      .set((eb) => ({ created_at: eb('created_at', '-', Number(spent.retryAfter) * 1000) }))
      .where('account_id', '=', a.id)
      .execute();
    const later = await post(env, a.token, { claveHacienda: doc.clave });
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect(later.body.data.destinatarios).toEqual([RECEPTOR]);
    await drained(env);
    expect(smtp.received.at(-1)!.to).toEqual([RECEPTOR]);

    // Each refusal logged, with the account, the clave and the reason; of an address only its domain.
    const refusals = logsOf(env).filter((l) => l.msg === 'mail request refused');
    expect(refusals.filter((l) => l.reason === 'recipient_not_allowed' && l.clave === doc.clave && l.accountId === a.id)).toHaveLength(60);
    expect(refusals.filter((l) => l.reason === 'limit_account' && l.accountId === a.id)).toHaveLength(41);
    expect(refusals.find((l) => l.reason === 'recipient_not_allowed')).toMatchObject({ refused: 10, domains: expect.arrayContaining(['ajeno0.test', 'ajeno9.test']) });
    expect(env.logText()).not.toContain('victima');
    expect(env.logText()).not.toContain(a.token);
  });

  it('the receptor and correosAdicionales are delivered; 5 resends a day per document, then 429 with Retry-After', async () => {
    const b = await env.account('relay-b');
    const doc = await accepted(env, b.id, { correosAdicionales: ['contabilidad@bncr.fi.cr'] });
    const ok1 = await post(env, b.token, { claveHacienda: doc.clave });
    const ok2 = await post(env, b.token, { claveHacienda: doc.clave, correos: ['PROVEEDORES@bncr.fi.cr'] });
    const ok3 = await post(env, b.token, { claveHacienda: doc.clave, correos: ['contabilidad@bncr.fi.cr', RECEPTOR] });
    expect([ok1.status, ok2.status, ok3.status], JSON.stringify([ok1.body, ok2.body, ok3.body])).toEqual([200, 200, 200]);
    expect(ok1.body.data.destinatarios).toEqual([RECEPTOR, 'contabilidad@bncr.fi.cr']);
    const burst = await Promise.all(Array.from({ length: 10 }, () => post(env, b.token, { claveHacienda: doc.clave })));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(2);
    const limited = burst.filter((r) => r.status === 429);
    expect(limited).toHaveLength(8);
    for (const r of limited) {
      expect(r.body).toEqual({ error: 'too_many_requests', message: 'Demasiados envíos de correo de este documento; intente de nuevo más tarde' });
      expect(Number(r.retryAfter)).toBeGreaterThan(23 * 3600);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(24 * 3600);
    }
    expect(await reenvios(env, doc.documentId)).toHaveLength(5);
    await drained(env);
    const mine = smtp.received.filter((m) => m.raw.includes(doc.clave));
    expect(mine).toHaveLength(6); // the automatic mail and five resends
    expect(new Set(mine.flatMap((m) => m.to).map((a) => a.toLowerCase()))).toEqual(new Set([RECEPTOR, 'contabilidad@bncr.fi.cr']));
    // Another document of the same account is not held by this one's limit.
    const other = await accepted(env, b.id);
    expect((await post(env, b.token, { claveHacienda: other.clave })).status).toBe(200);
  });

  it('an address the operator registered for the account is delivered; any other still refused, nothing queued', async () => {
    const c = await env.account('relay-c');
    const doc = await accepted(env, c.id);
    const before = await post(env, c.token, { claveHacienda: doc.clave, correos: ['auditor@externo.test'] });
    expect([before.status, before.body.details]).toEqual([400, [{ path: 'correos[0]', message: 'is neither a recipient of the document nor an address registered for the account' }]]);
    expect(await changeMailAllowList(env.ctx, 'relay-c', { allow: ['Auditor@Externo.test'] })).toEqual(['auditor@externo.test']);
    const mixed = await post(env, c.token, { claveHacienda: doc.clave, correos: ['auditor@externo.test', 'intruso@externo.test'] });
    expect([mixed.status, mixed.body.message, mixed.body.details.map((d: { path: string }) => d.path)]).toEqual([400, REFUSED, ['correos[1]']]);
    expect(await reenvios(env, doc.documentId)).toEqual([]);
    const ok = await post(env, c.token, { claveHacienda: doc.clave, correos: ['auditor@externo.test'] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    await drained(env);
    expect(smtp.received.at(-1)!.to).toEqual(['auditor@externo.test']);
    // Another account cannot use it.
    const a = await env.account('relay-d');
    const docA = await accepted(env, a.id);
    expect((await post(env, a.token, { claveHacienda: docA.clave, correos: ['auditor@externo.test'] })).status).toBe(400);
    // Removed: refused again.
    expect(await changeMailAllowList(env.ctx, 'relay-c', { disallow: ['auditor@externo.test'] })).toEqual([]);
    expect((await post(env, c.token, { claveHacienda: doc.clave, correos: ['auditor@externo.test'] })).status).toBe(400);
  });

  it("every mail delivered has the operator's sender as envelope and header From, the issuer's name and Reply-To its address", async () => {
    await drained(env);
    expect(smtp.received.length).toBeGreaterThanOrEqual(13);
    expect(smtp.received.map((m) => m.from).filter((f) => f !== OPERATOR)).toEqual([]);
    for (const m of smtp.received) {
      const parsed = await simpleParser(m.raw);
      expect(parsed.from?.value).toEqual([{ address: OPERATOR, name: ISSUER_NAME }]);
      expect(parsed.replyTo?.value.map((v) => v.address)).toEqual([TENANT_ADDRESS]);
    }
  });

  it('the operator (local mode) mails whom it names, past the limits', async () => {
    const e = await env.account('relay-e');
    const doc = await accepted(env, e.id);
    for (let i = 0; i < 7; i++) {
      const r = await requestMail(env.ctx, e.id, doc.clave, { caller: 'operator', to: [`otro${i}@cualquiera.test`] });
      expect(r.mail.destinatarios).toEqual([`otro${i}@cualquiera.test`]);
    }
    // The API's own count is untouched by the operator's resends.
    expect((await post(env, e.token, { claveHacienda: doc.clave })).status).toBe(200);
  });
});

describe('an SMTP server without a configured sender', () => {
  let smtp: TestSmtp;
  let env: Env;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    env = await makeEnv(smtp, {});
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await smtp?.close();
  });

  it("sends nothing From the tenant's address: the automatic mail is fallido, a resend is a 400", async () => {
    const a = await env.account('sin-remitente');
    const doc = await accepted(env, a.id);
    const m = (await mailStatusOf(env.ctx, [doc.documentId])).get(doc.documentId)!;
    expect(m.estado).toBe('fallido');
    expect(m.ultimaRespuesta).toMatch(/^no sender: the operator has set no From address/);
    expect(smtp.attempts).toBe(0);
    const r = await post(env, a.token, { claveHacienda: doc.clave });
    expect([r.status, r.body]).toEqual([400, { error: 'bad_request', message: 'El servicio no tiene un remitente de correo configurado; no se envía el correo' }]);
    expect(logsOf(env).some((l) => l.msg === 'mail request refused' && l.reason === 'no_sender' && l.clave === doc.clave)).toBe(true);
    await drained(env);
    expect(smtp.received).toEqual([]);
  });
});

// Issue 37, point 7: correosAdicionales are counted by the same policy. 20 documents through the hosted API (HTTP,
// real tokens), each with 10 foreign correosAdicionales: the receptor of each gets its mail; of the 200 foreign
// addresses at most 5 per document and 60 for the account in the hour are delivered (the defaults), the rest held
// (a mail fallido with the reason, never sent) and logged; every document aceptado. Where the operator set an
// allow-list, a correosAdicionales beyond it is a 400 naming correosAdicionales[i] at submission.
describe('correosAdicionales under the mail policy (issue 37, point 7)', () => {
  let smtp: TestSmtp;
  let env: Env;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    env = await makeEnv(smtp, { fromAddress: OPERATOR });
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await smtp?.close();
  });

  const items = async (token: string, body: unknown) => {
    const res = await request(`${env.baseUrl}/api/enviar/items`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.statusCode, body: JSON.parse(await res.body.text()) as any };
  };

  it('20 documents × 10 foreign correosAdicionales: 60 delivered (5 per document, 60 an hour), 140 held with the reason; every receptor mailed', async () => {
    const a = await env.account('adicionales-a');
    const claves: string[] = [];
    for (let d = 0; d < 20; d++) {
      const r = await items(a.token, { ...BODIES.FE(), emisor: cedulas.get(a.id), numeroReferencia: ++seq, correosAdicionales: Array.from({ length: 10 }, (_, j) => `copia${d}.${j}@ajeno${j}.test`) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      claves.push(r.body.data?.clave ?? r.body.clave);
    }
    env.worker.wake();
    const ids = (await env.ctx.store.db.selectFrom('documents').select(['id', 'state']).where('account_id', '=', a.id).execute()).map((r) => Number(r.id));
    await until(async () => {
      const rows = await env.ctx.store.db.selectFrom('documents').select('state').where('account_id', '=', a.id).execute();
      return rows.every((r) => r.state === 'aceptado') ? true : undefined;
    }, 'every document aceptado', 60_000);
    await until(async () => ((await env.ctx.store.db.selectFrom('email_deliveries').select('id').where('account_id', '=', a.id).where('state', '!=', 'fallido').execute()).length === 20 ? true : undefined), 'the 20 mails queued', 30_000);
    await drained(env);
    const foreign = smtp.received.flatMap((m) => m.to).filter((to) => /ajeno\d\.test$/.test(to));
    expect(foreign).toHaveLength(60);
    expect(smtp.received.filter((m) => m.to.includes(RECEPTOR))).toHaveLength(20);
    // Per document: at most 5 of its own.
    for (let d = 0; d < 20; d++) expect(foreign.filter((to) => to.startsWith(`copia${d}.`)).length).toBeLessThanOrEqual(5);
    const held = await env.ctx.store.db.selectFrom('email_deliveries').selectAll().where('document_id', 'in', ids).where('state', '=', 'fallido').execute();
    expect(held.flatMap((h) => JSON.parse(h.recipients) as string[])).toHaveLength(140);
    for (const h of held) expect(h.last_reply).toMatch(/^held: the (document's limit of 5 additional addresses a day|account's limit of 60 mails an hour)/);
    expect(held.some((h) => h.last_reply!.includes("account's limit of 60"))).toBe(true);
    expect(await env.ctx.store.db.selectFrom('jobs').select('id').where('email_id', 'in', held.map((h) => h.id)).execute()).toEqual([]);
    const logged = logsOf(env).filter((l) => l.msg === 'mail recipients held' && l.accountId === a.id);
    expect(logged.reduce((n, l) => n + l.held, 0)).toBe(140);
    expect(env.logText()).not.toContain('copia');
    // The hour's budget is the one /api/enviar/correo counts: spent, a resend waits.
    const resend = await post(env, a.token, { claveHacienda: claves[0] });
    expect([resend.status, resend.body.error]).toEqual([429, 'too_many_requests']);
  }, 120_000);

  it('with an allow-list set by the operator: a correosAdicionales beyond it is a 400 at correosAdicionales[i]; one on it is delivered, not counted', async () => {
    const b = await env.account('adicionales-b');
    await changeMailAllowList(env.ctx, 'adicionales-b', { allow: ['auditor@externo.test'] });
    const refused = await items(b.token, { ...BODIES.FE(), emisor: cedulas.get(b.id), numeroReferencia: ++seq, correosAdicionales: ['auditor@externo.test', 'intruso@ajeno.test', RECEPTOR] });
    expect(refused).toEqual({ status: 400, body: { error: 'bad_request', message: REFUSED, details: [{ path: 'correosAdicionales[1]', message: 'is neither a recipient of the document nor an address registered for the account' }] } });
    expect(await env.ctx.store.db.selectFrom('documents').select('id').where('account_id', '=', b.id).execute()).toEqual([]);
    const doc = await accepted(env, b.id, { correosAdicionales: ['Auditor@Externo.test'] });
    await drained(env);
    const mine = smtp.received.filter((m) => m.raw.includes(doc.clave));
    expect(mine.map((m) => m.to.map((to) => to.toLowerCase()))).toEqual([[RECEPTOR, 'auditor@externo.test']]);
    expect(await env.ctx.store.db.selectFrom('mail_requests').select('id').where('account_id', '=', b.id).execute()).toEqual([]);
  }, 60_000);
});
