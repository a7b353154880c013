// Issue 29, "Keys before they expire": every issuer's certificate end is known (`emisor list` shows it, --json too);
// `send` warns from 30 days before it ends (one stderr line, the wording `fecr doctor` uses); the service (the worker
// `fecr serve` runs) logs a warning and queues the webhook event `emisor.llave_por_vencer` once a day per issuer, its
// clock driven by the test: two checks within one day → one delivery, the next day → a second one; an ended key is
// refused before signing. Real parts: a .p12 made with node-forge, the CLI in-process in its own HOME with the
// embedded emulator, a SQLite store, a webhook receiver on 127.0.0.1 that verifies the Standard Webhooks signature.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateEndWarning, daysUntilExpiry } from '../src/core/sign/cert-expiry.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { resolveEndpoints } from '../src/hacienda/client/index.js';
import { createAccount } from '../src/service/accounts.js';
import type { ServiceContext } from '../src/service/context.js';
import { costaRicaDay, KEY_EXPIRING_EVENT } from '../src/service/delivery/cert-expiry.js';
import { startWorker, type Worker } from '../src/service/delivery/worker.js';
import { listIssuerDetails, loadIssuerForSigning, registerIssuer } from '../src/service/issuers.js';
import { SecretBox } from '../src/service/secrets.js';
import { ServiceError } from '../src/service/service-error.js';
import { ISSUER } from './helpers/bodies.js';
import { runCli, tempDir, type CliRun } from './helpers/cli.js';
import { openTestStore } from './helpers/stores.js';
import { FAST_WORKER } from './helpers/worker-docs.js';

const ID = '3101123456';
const PIN = '1234';
const DAY = 86_400_000;
const root = tempDir('fecr-cert-expiry-');

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A .p12 of the test issuer (PIN 1234) that ends at `notAfter`. */
const p12Ending = (notAfter: Date) => createTestP12({ id: ID, type: '02', pin: PIN, notBefore: new Date(notAfter.getTime() - 400 * DAY), notAfter });

describe('the days left and the one wording', () => {
  it('warns under 30 days only, while the certificate is valid', () => {
    const now = Date.UTC(2026, 10, 27, 12);
    expect(daysUntilExpiry(now + 10 * DAY + 3_600_000, now)).toBe(10);
    expect(certificateEndWarning(ID, now + 30 * DAY + 1, now)).toBeUndefined();
    expect(certificateEndWarning(ID, now - 1, now)).toBeUndefined();
    expect(certificateEndWarning(ID, now + 29 * DAY + 1, now)).toBe(
      `the certificate of issuer ${ID} ends on 2026-12-26 (29 days): renew it (get a new llave criptográfica from Hacienda, put the issuer's .p12 and its PIN in ISSUER.json (fecr emisor update ISSUER.json --p12 FILE --pin-stdin))`,
    );
  });
});

describe('fecr emisor list and fecr send with a key that ends in 10 days', () => {
  const home = join(root, 'cli');
  const work = join(home, 'work');
  const fecr = (args: string[], stdin?: string): Promise<CliRun> => runCli(args, { env: { HOME: home, FECR_NO_KEYCHAIN: '1' }, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });
  const notAfter = new Date(Date.now() + 10 * DAY + 12 * 3_600_000);
  const until = notAfter.toISOString().slice(0, 10);

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'issuer.p12'), p12Ending(notAfter));
    const init = await fecr(['init', '--p12', 'issuer.p12', '--pin-stdin'], `${PIN}\n`);
    expect(init.code, init.stderr).toBe(0);
    const file = join(work, 'issuer.json');
    const r = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    r.claveHacienda = Buffer.from('secreto').toString('base64');
    writeFileSync(file, JSON.stringify(r, null, 2));
    const reg = await fecr(['emisor', 'register', 'issuer.json']);
    expect(reg.code, reg.stderr).toBe(0);
  }, 30_000);

  it('emisor list shows the day the certificate ends (certificateUntil), --json its instant', async () => {
    const list = await fecr(['emisor', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const [header, row] = list.stdout.trim().split('\n');
    expect(header!.split('\t').at(-1)).toBe('certificateUntil');
    expect(row!.split('\t').at(-1)).toBe(until);
    const json = JSON.parse((await fecr(['emisor', 'list', '--json'])).stdout) as { certificateUntil: string }[];
    expect(Date.parse(json[0]!.certificateUntil)).toBe(Math.floor(notAfter.getTime() / 1000) * 1000);
  });

  it('send: the document goes, and one warning line names the issuer, the day and the days left', async () => {
    const sent = await fecr(['send', 'fe.json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^\d{50}\n$/);
    const warnings = sent.stderr.split('\n').filter((l) => l.startsWith('warning:'));
    expect(warnings).toEqual([
      `warning: the certificate of issuer ${ID} ends on ${until} (10 days): renew it (get a new llave criptográfica from Hacienda, put the issuer's .p12 and its PIN in ISSUER.json (fecr emisor update ISSUER.json --p12 FILE --pin-stdin))`,
    ]);
  }, 30_000);

  it('batch: one warning line for the issuer, after the summary', async () => {
    // Two documents of the issuer (numeroReferencia left to fecr's numbering): one line, not one per document.
    const fe = JSON.parse(readFileSync(join(work, 'fe.json'), 'utf8')) as Record<string, unknown>;
    delete fe.numeroReferencia;
    writeFileSync(join(work, 'docs.json'), JSON.stringify([fe, fe]));
    const r = await fecr(['batch', 'docs.json']);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning:'));
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^warning: the certificate of issuer ${ID} ends on ${until} \\(10 days\\): renew it \\(`))]);
  }, 30_000);
});

interface Hook {
  id: string;
  payload: any;
}

/** A webhook receiver that records only deliveries whose signature verifies. */
async function startReceiver(): Promise<{ url: string; hooks: Hook[]; secret: string; close(): Promise<void> }> {
  const self = { url: '', hooks: [] as Hook[], secret: '', close: async (): Promise<void> => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The Standard Webhooks signature, checked by hand: the service's clock is the test's (days ahead), so the
      // library's 5-minute timestamp tolerance against this machine's clock does not apply.
      const body = Buffer.concat(chunks).toString('utf8');
      const [id, ts] = [String(req.headers['webhook-id']), String(req.headers['webhook-timestamp'])];
      const key = Buffer.from(self.secret.replace(/^whsec_/, ''), 'base64');
      const want = `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
      if (String(req.headers['webhook-signature']).split(' ').includes(want)) self.hooks.push({ id, payload: JSON.parse(body) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  self.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return self;
}

async function eventually<T>(check: () => T | Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the service: emisor.llave_por_vencer once a day per issuer', () => {
  const start = Date.UTC(2026, 10, 27, 14); // 08:00 in Costa Rica
  let clock = start;
  const notAfter = new Date(start + 10 * DAY + 3_600_000);
  let ctx: ServiceContext;
  let accountId: number;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let worker: Worker | undefined;
  const logged: { msg: string; issuer?: string }[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    const dir = join(root, 'service');
    mkdirSync(dir, { recursive: true });
    const sink = { write: (line: string) => void logged.push(JSON.parse(line) as { msg: string }) };
    ctx = {
      store: await openTestStore({ file: join(dir, 'fecr.db') }),
      secrets: new SecretBox(randomBytes(32)),
      logger: pino({ level: 'warn' }, sink),
      now: () => clock,
      randomBytes: (n) => randomBytes(n),
      // Nothing is sent to Hacienda here: only the webhook.
      hacienda: { environment: 'local', endpoints: resolveEndpoints('local', { baseUrl: 'http://127.0.0.1:9' }) },
    };
    const { account, webhookSecret } = await createAccount(ctx, { base: 'acme', password: 'password-123', webhookUrl: receiver.url });
    receiver.secret = webhookSecret ?? '';
    accountId = account.id;
    await registerIssuer(ctx, accountId, { ...ISSUER, identificacion: ID, pinCertificado: PIN, certificadoHacienda: p12Ending(notAfter).toString('base64') });
  }, 30_000);
  afterAll(async () => {
    await worker?.stop();
    await ctx?.store.close();
    await receiver?.close();
  });

  it('the issuer listing carries the certificate end', async () => {
    const [d] = await listIssuerDetails(ctx, accountId);
    expect(d!.certificateUntil).toBe(new Date(Math.floor(notAfter.getTime() / 1000) * 1000).toISOString());
  });

  it('at start and on a second check the same day: one delivery and one log line; the next day a second one', async () => {
    // As `fecr serve` starts it (src/server/service.ts): a check at start, then every hour.
    worker = startWorker(ctx, { ...FAST_WORKER, certificateCheckIntervalMs: 3_600_000 });
    const first = await eventually(() => receiver.hooks.length, (n) => n >= 1, 10_000);
    expect(first).toBe(1);
    // Later the same Costa Rica day: nothing new (the webhook-id is the issuer's and the day's).
    clock = start + 6 * 3_600_000;
    expect(await worker.checkCertificates()).toBe(0);
    expect(await worker.checkCertificates()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.hooks).toHaveLength(1);
    const day1 = costaRicaDay(start);
    expect(receiver.hooks[0]!.id).toMatch(new RegExp(`^msg_llave_\\d+_${day1}$`));
    expect(receiver.hooks[0]!.payload).toMatchObject({
      type: KEY_EXPIRING_EVENT,
      emisor: { identificacion: ID, ambiente: 2 },
      vence: new Date(Math.floor(notAfter.getTime() / 1000) * 1000).toISOString(),
      diasRestantes: 10,
      fecha: day1,
    });
    expect(receiver.hooks[0]!.payload.mensaje).toBe(certificateEndWarning(ID, Math.floor(notAfter.getTime() / 1000) * 1000, start));

    // The next day: one more delivery, one more log line.
    clock = start + DAY;
    expect(await worker.checkCertificates()).toBe(1);
    expect(await worker.checkCertificates()).toBe(0);
    const hooks = await eventually(() => receiver.hooks.length, (n) => n >= 2, 10_000);
    expect(hooks).toBe(2);
    expect(receiver.hooks[1]!.id).toBe(receiver.hooks[0]!.id.replace(day1, costaRicaDay(start + DAY)));
    expect(receiver.hooks[1]!.payload.diasRestantes).toBe(9);
    const lines = logged.filter((l) => l.issuer === ID && l.msg.startsWith(`the certificate of issuer ${ID} ends on`));
    expect(lines).toHaveLength(2);
  });

  it('an ended key is refused before signing, as before', async () => {
    clock = notAfter.getTime() + DAY;
    const err = await loadIssuerForSigning(ctx, accountId, ID).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).message).toContain('El certificado del emisor está vencido');
    // And no notice is given for it (signing refuses it, with its own error).
    expect(await worker!.checkCertificates()).toBe(0);
  });
});
