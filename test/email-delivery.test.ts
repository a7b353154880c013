// The receptor's mail (issue 17) against a real SMTP server (smtp-server on 127.0.0.1:0 in this process), the real
// emulator and a real SQLite file: after aceptado, one mail to receptor.correoElectronico + correosAdicionales whose
// three attachments decode byte for byte to the stored XML, the PDF and the MensajeHacienda; STARTTLS with a test
// certificate and AUTH; 451 twice then 250 → one mail; 550 → fallido with the reply, no retry, a webhook event;
// a TE without receptor → no mail; a resend → a second mail with a new Message-ID; nothing before aceptado; the outbox.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { resolveEndpoints } from '../src/hacienda/index.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { mailStatusOf, requestMail } from '../src/service/delivery/email.js';
import { startWorker, type Worker } from '../src/service/delivery/worker.js';
import { submitDocument } from '../src/service/documents.js';
import { getFile } from '../src/service/files.js';
import { registerIssuer } from '../src/service/issuers.js';
import type { MailDefaults } from '../src/service/mail-defaults.js';
import { setAccountMail } from '../src/service/mail-settings.js';
import { ServiceError } from '../src/service/service-error.js';
import { makeServiceContext, type TestContext } from './helpers/api-context.js';
import { makeTestIssuer, type TestIssuer } from './helpers/issuer.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';
import { BODIES, FAST_WORKER, withTimeout } from './helpers/worker-docs.js';

let emu: RunningEmulator;
let issuer: TestIssuer;
let seq = 5000;
const opened: TestContext[] = [];

beforeAll(async () => {
  issuer = makeTestIssuer();
  emu = await startEmulator({ processingDelayMs: 20 });
});
afterAll(async () => {
  for (const t of opened) await t.close();
  await emu.close();
});

interface Env {
  t: TestContext;
  ctx: ServiceContext;
  accountId: number;
  worker: Worker;
}

async function makeEnv(mail: Partial<MailDefaults> | undefined, opts: { webhookUrl?: string } = {}): Promise<Env> {
  const t = await makeServiceContext({ haciendaUrl: emu.url });
  opened.push(t);
  const ctx: ServiceContext = {
    ...t.ctx,
    hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: emu.url }) },
    ...(mail ? { mail: { outboxDir: join(t.dir, 'outbox'), ...mail } } : {}),
  };
  const { account } = await createAccount(ctx, { base: `acme${seq}`, password: 'password-123', ...(opts.webhookUrl ? { webhookUrl: opts.webhookUrl } : {}) });
  await registerIssuer(ctx, account.id, { ...issuer.issuer });
  const worker = startWorker(ctx, { ...FAST_WORKER, emailBackoffBaseMs: 20, emailBackoffMaxMs: 100 });
  return { t, ctx, accountId: account.id, worker };
}

async function submit(env: Env, kind: 'FE' | 'TE', extra: Record<string, unknown> = {}): Promise<{ clave: string; documentId: number }> {
  const body = { ...BODIES[kind](), numeroReferencia: ++seq, ...extra };
  const r = await submitDocument(env.ctx, env.accountId, body);
  env.worker.wake();
  return r;
}

/** Waits until the document's latest mail is no longer pendiente (or the worker is idle with none). */
async function settledMail(env: Env, documentId: number, ms = 15_000) {
  return withTimeout(
    (async () => {
      for (;;) {
        const m = (await mailStatusOf(env.ctx, [documentId])).get(documentId);
        if (m && m.estado !== 'pendiente') return m;
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    ms,
    'the mail settled',
  );
}

async function docRow(env: Env, documentId: number) {
  return env.ctx.store.db.selectFrom('documents').selectAll().where('id', '=', documentId).executeTakeFirstOrThrow();
}

describe('the receptor mail over SMTP', () => {
  let smtp: TestSmtp;
  let env: Env;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    env = await makeEnv({ smtp: { host: '127.0.0.1', port: smtp.port, security: 'none' }, fromAddress: 'facturas@fecr.test', fromName: 'Facturación ACME' });
  });
  afterAll(async () => {
    await env.worker.stop();
    await smtp.close();
  });

  it('after aceptado: one mail to the receptor and the additional addresses, three attachments byte for byte', async () => {
    const { clave, documentId } = await submit(env, 'FE', { correosAdicionales: ['contabilidad@bncr.fi.cr', 'PROVEEDORES@bncr.fi.cr'] });
    const m = await settledMail(env, documentId);
    expect(m.estado).toBe('enviado');
    expect(m.intentos).toBe(1);
    expect(m.ultimaRespuesta).toMatch(/^250 /);
    const doc = await docRow(env, documentId);
    expect(doc.state).toBe('aceptado');
    const mine = smtp.received.filter((r) => r.raw.includes(clave));
    expect(mine).toHaveLength(1);
    // receptor first; the duplicate address (other case) once
    expect(mine[0]!.to).toEqual(['proveedores@bncr.fi.cr', 'contabilidad@bncr.fi.cr']);
    const parsed = await simpleParser(mine[0]!.raw);
    expect(parsed.messageId).toBe(m.messageId);
    expect(parsed.subject).toBe(`Factura electrónica ${clave.slice(21, 41)} de SOFTWARE TICO SOCIEDAD ANONIMA — ₡105\u00a0939,20`);
    expect(parsed.from?.value[0]).toEqual({ address: 'facturas@fecr.test', name: 'Facturación ACME' });
    expect(parsed.replyTo?.value[0]?.address).toBe('facturas@softwaretico.cr');
    expect(parsed.text).toContain(`Clave numérica: ${clave}`);
    expect(parsed.html).toContain('<li><code>' + clave + '.pdf</code>');
    const byName = new Map(parsed.attachments.map((a) => [a.filename, a]));
    expect([...byName.keys()].sort()).toEqual([`${clave}.pdf`, `${clave}.xml`, `${clave}_respuesta.xml`]);
    expect(byName.get(`${clave}.xml`)!.content.equals(Buffer.from(doc.xml, 'utf8'))).toBe(true);
    expect(byName.get(`${clave}_respuesta.xml`)!.content.equals(Buffer.from(doc.response_xml!, 'utf8'))).toBe(true);
    const pdf = await getFile(env.ctx, env.accountId, clave, 'PDF');
    expect(byName.get(`${clave}.pdf`)!.content.equals(Buffer.from(pdf!.encodedFile, 'base64'))).toBe(true);
    expect(byName.get(`${clave}.pdf`)!.contentType).toBe('application/pdf');
  });

  it('a TE without receptor sends nothing; a resend is a second mail with a new Message-ID', async () => {
    const te = await submit(env, 'TE');
    const fe = await submit(env, 'FE');
    const first = await settledMail(env, fe.documentId);
    await withTimeout(env.worker.idle(), 10_000, 'idle');
    expect((await docRow(env, te.documentId)).state).toBe('aceptado');
    expect((await mailStatusOf(env.ctx, [te.documentId])).has(te.documentId)).toBe(false);
    expect(smtp.received.some((r) => r.raw.includes(te.clave))).toBe(false);

    // The operator names any address (an account, through the API, only the document's recipients and its
    // allow-list: test/server-api-correo-relay.test.ts).
    const again = await requestMail(env.ctx, env.accountId, fe.clave, { caller: 'operator', to: ['otra@cliente.cr'] });
    env.worker.wake();
    expect(again.mail.motivo).toBe('reenvio');
    const second = await withTimeout(
      (async () => {
        for (;;) {
          const m = (await mailStatusOf(env.ctx, [fe.documentId])).get(fe.documentId)!;
          if (m.messageId === again.mail.messageId && m.estado !== 'pendiente') return m;
          await new Promise((r) => setTimeout(r, 20));
        }
      })(),
      10_000,
      'resend',
    );
    expect(second.estado).toBe('enviado');
    expect(second.messageId).not.toBe(first.messageId);
    const mine = smtp.received.filter((r) => r.raw.includes(fe.clave));
    expect(mine.map((r) => r.to)).toEqual([['proveedores@bncr.fi.cr'], ['otra@cliente.cr']]);
    // bad addresses are findings at their index; a TE without receptor has nobody to mail
    await expect(requestMail(env.ctx, env.accountId, fe.clave, { to: ['ok@x.cr', 'no es correo'] })).rejects.toMatchObject({
      status: 400,
      details: [{ path: 'correos[1]', message: 'must be an e-mail address' }],
    });
    await expect(requestMail(env.ctx, env.accountId, te.clave)).rejects.toBeInstanceOf(ServiceError);
  });

  it('a bad correosAdicionales is a finding at its path; nothing is sent before aceptado', async () => {
    await expect(submit(env, 'FE', { correosAdicionales: ['bien@x.cr', 'mal'] })).rejects.toMatchObject({
      details: expect.arrayContaining([expect.objectContaining({ path: 'correosAdicionales[1]' })]),
    });
    const pending = await submitDocument(env.ctx, env.accountId, { ...BODIES.FE(), numeroReferencia: ++seq });
    await expect(requestMail(env.ctx, env.accountId, pending.clave)).rejects.toMatchObject({ status: 400 });
    expect(await env.ctx.store.db.selectFrom('email_deliveries').select('id').where('document_id', '=', pending.documentId).execute()).toHaveLength(0);
  });
});

describe('SMTP answers', () => {
  it('451 twice, then 250: one delivered mail after three attempts', async () => {
    const smtp = await startTestSmtp({ answer: (n) => (n <= 2 ? { code: 451, message: 'Requested action aborted: try again later' } : undefined) });
    const env = await makeEnv({ smtp: { host: '127.0.0.1', port: smtp.port, security: 'none' }, fromAddress: 'facturas@fecr.test' });
    try {
      const { clave, documentId } = await submit(env, 'FE');
      const m = await settledMail(env, documentId);
      expect(m.estado).toBe('enviado');
      expect(m.intentos).toBe(3);
      expect(smtp.attempts).toBe(3);
      expect(smtp.received.filter((r) => r.raw.includes(clave))).toHaveLength(1);
      // the operator's address without a name of its own: the issuer's name, and its address as Reply-To (issue 25:
      // the issuer's address as From, the old default, made the operator's server send as any domain a tenant wrote)
      const parsed = await simpleParser(smtp.received[0]!.raw);
      expect(smtp.received[0]!.from).toBe('facturas@fecr.test');
      expect(parsed.from?.value[0]).toEqual({ address: 'facturas@fecr.test', name: 'SOFTWARE TICO SOCIEDAD ANONIMA' });
      expect(parsed.replyTo?.value[0]?.address).toBe('facturas@softwaretico.cr');
    } finally {
      await env.worker.stop();
      await smtp.close();
    }
  });

  it('550: fallido with the reply, never retried, and a webhook event documento.correo_fallido', async () => {
    const smtp = await startTestSmtp({ answer: () => ({ code: 550, message: 'Mailbox unavailable' }) });
    const events: any[] = [];
    const hook: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        events.push({ id: req.headers['webhook-id'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    const port = (hook.address() as { port: number }).port;
    const env = await makeEnv({ smtp: { host: '127.0.0.1', port: smtp.port, security: 'none' }, fromAddress: 'facturas@fecr.test' }, { webhookUrl: `http://127.0.0.1:${port}/hook` });
    try {
      const { clave, documentId } = await submit(env, 'FE');
      const m = await settledMail(env, documentId);
      expect(m.estado).toBe('fallido');
      expect(m.intentos).toBe(1);
      expect(m.ultimaRespuesta).toMatch(/^550 Mailbox unavailable/);
      await withTimeout(env.worker.idle(), 10_000, 'idle');
      await new Promise((r) => setTimeout(r, 300));
      expect(smtp.attempts).toBe(1);
      const failed = events.filter((e) => e.body.type === 'documento.correo_fallido');
      expect(failed).toHaveLength(1);
      expect(failed[0].body).toMatchObject({ folioId: clave, folioType: 'INVOICE', correo: { messageId: m.messageId, destinatarios: ['proveedores@bncr.fi.cr'], intentos: 1 } });
      expect(failed[0].body.correo.respuesta).toMatch(/^550/);
      // the spec's verdict webhook still came, once
      expect(events.filter((e) => e.body.folioDetails)).toHaveLength(1);
    } finally {
      await env.worker.stop();
      await smtp.close();
      await new Promise((r) => hook.close(() => r(undefined)));
    }
  });

  it('connection refused is temporary: retried with backoff until the window closes, then fallido', async () => {
    const probe = await startTestSmtp();
    const port = probe.port;
    await probe.close(); // nothing listens there now
    const t = await makeServiceContext({ haciendaUrl: emu.url });
    opened.push(t);
    const ctx: ServiceContext = { ...t.ctx, mail: { outboxDir: join(t.dir, 'outbox'), smtp: { host: '127.0.0.1', port, security: 'none' }, fromAddress: 'facturas@fecr.test' } };
    const { account } = await createAccount(ctx, { base: 'refused', password: 'password-123' });
    await registerIssuer(ctx, account.id, { ...issuer.issuer });
    const worker = startWorker(ctx, { ...FAST_WORKER, emailBackoffBaseMs: 20, emailBackoffMaxMs: 40, emailRetryWindowMs: 2_000 });
    try {
      const { documentId } = await submitDocument(ctx, account.id, { ...BODIES.FE(), numeroReferencia: ++seq });
      worker.wake();
      const m = await settledMail({ t, ctx, accountId: account.id, worker }, documentId);
      expect(m.estado).toBe('fallido');
      expect(m.intentos).toBeGreaterThan(2);
      expect(m.ultimaRespuesta).toMatch(/ECONNREFUSED|ESOCKET|ECONNECTION/);
    } finally {
      await worker.stop();
    }
  });
});

describe('STARTTLS, AUTH and the account settings', () => {
  it('an account with its own server: STARTTLS with a test certificate, AUTH, the password sealed', async () => {
    const smtp = await startTestSmtp({ tls: true, auth: { user: 'fecr', pass: 'clave-smtp-secreta' } });
    // The service's default server points nowhere; the account's own settings win (the test CA is trusted through
    // the defaults' `ca`, as a private CA would be).
    const env = await makeEnv({ smtp: { host: '127.0.0.1', port: 1, security: 'none', ca: smtp.ca! } });
    try {
      const view = await setAccountMail(env.ctx, `acme${seq}`, {
        smtpUrl: `smtp://fecr:clave-smtp-secreta@127.0.0.1:${smtp.port}`,
        from: 'ACME Facturas <facturas@acme.cr>',
        replyTo: 'cobros@acme.cr',
      });
      expect(view).toEqual({ smtpUrl: `smtp://fecr@127.0.0.1:${smtp.port}`, hasPassword: true, from: 'ACME Facturas <facturas@acme.cr>', replyTo: 'cobros@acme.cr' });
      expect((await env.t.rawBytes()).includes(Buffer.from('clave-smtp-secreta'))).toBe(false);
      const { clave, documentId } = await submit(env, 'FE');
      const m = await settledMail(env, documentId);
      expect(m.estado).toBe('enviado');
      const got = smtp.received.find((r) => r.raw.includes(clave))!;
      expect(got.secure).toBe(true);
      expect(got.user).toBe('fecr');
      const parsed = await simpleParser(got.raw);
      expect(parsed.from?.value[0]).toEqual({ address: 'facturas@acme.cr', name: 'ACME Facturas' });
      expect(parsed.replyTo?.value[0]?.address).toBe('cobros@acme.cr');
    } finally {
      await env.worker.stop();
      await smtp.close();
    }
  });

  it('a wrong password is a permanent failure (535), recorded', async () => {
    const smtp = await startTestSmtp({ tls: true, auth: { user: 'fecr', pass: 'right' } });
    const env = await makeEnv({ smtp: { host: '127.0.0.1', port: smtp.port, security: 'starttls', user: 'fecr', password: 'wrong', ca: smtp.ca! }, fromAddress: 'facturas@fecr.test' });
    try {
      const { documentId } = await submit(env, 'FE');
      const m = await settledMail(env, documentId);
      expect(m.estado).toBe('fallido');
      expect(m.ultimaRespuesta).toMatch(/535/);
      expect(smtp.received).toHaveLength(0);
    } finally {
      await env.worker.stop();
      await smtp.close();
    }
  });
});

describe('the outbox', () => {
  it('without an SMTP server the mail is an .eml file in the outbox, the same MIME', async () => {
    const env = await makeEnv({});
    try {
      const { clave, documentId } = await submit(env, 'FE');
      const m = await settledMail(env, documentId);
      expect(m.estado).toBe('enviado');
      const dir = join(env.t.dir, 'outbox');
      const files = readdirSync(dir);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(new RegExp(`^${clave}-\\d+\\.eml$`));
      expect(m.ultimaRespuesta).toBe(`outbox: ${join(dir, files[0]!)}`);
      const parsed = await simpleParser(readFileSync(join(dir, files[0]!)));
      expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value.map((v) => v.address) : []).toEqual(['proveedores@bncr.fi.cr']);
      const doc = await docRow(env, documentId);
      expect(parsed.attachments.find((a) => a.filename === `${clave}.xml`)!.content.equals(Buffer.from(doc.xml))).toBe(true);
    } finally {
      await env.worker.stop();
    }
  });

  it('a service without mail (no ctx.mail) queues none', async () => {
    const env = await makeEnv(undefined);
    try {
      const { documentId } = await submit(env, 'FE');
      await withTimeout(
        (async () => {
          while ((await docRow(env, documentId)).state !== 'aceptado') await new Promise((r) => setTimeout(r, 20));
        })(),
        10_000,
        'aceptado',
      );
      await withTimeout(env.worker.idle(), 10_000, 'idle');
      expect(await env.ctx.store.db.selectFrom('email_deliveries').select('id').execute()).toHaveLength(0);
    } finally {
      await env.worker.stop();
    }
  });
});
