// The operator's side of issue 25, point 1 (`POST /api/enviar/correo` is no mail relay), in-process with temp data
// dirs: `fecr accounts mail BASE --allow ADDR… | --disallow ADDR…` keeps the account's allow-list (lower-cased, shown
// with the settings, a bad address refused naming the flag, nothing changed); `fecr serve` refuses an SMTP server
// without a sender of the operator's, and a limit that is not a whole number ≥ 1, before starting anything; and local
// mode, where the data dir's account is its own operator, mails whom it names as often as it likes, From the issuer's
// own address when the profile names no sender.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoResult } from '../src/commands/demo/run.js';
import { mailAllowList } from '../src/service/mail-settings.js';
import { openService } from '../src/service/runtime.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startTestSmtp, type TestSmtp } from './helpers/smtp.js';

describe('fecr accounts mail --allow / --disallow', () => {
  const dir = tempDir('fecr-cli-mail-allow-');
  const dataDir = join(dir, 'data');
  const env = { HOME: dir, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1' };
  const fecr = (args: string[], stdin?: string) => runCli(args, { env, ...(stdin !== undefined ? { stdin } : {}) });
  const stored = async () => {
    const opened = await openService({ dataDir, env, logger: pino({ level: 'silent' }), startLocalEmulator: false, mail: false });
    try {
      return await mailAllowList(opened.ctx, 'acme');
    } finally {
      await opened.close();
    }
  };

  it('adds, shows and removes addresses; the SMTP settings stay as they were', async () => {
    expect((await fecr(['accounts', 'create', 'acme', '--password-stdin'], 'supersecreto\n')).code).toBe(0);
    const add = await fecr(['accounts', 'mail', 'acme', '--allow', 'Auditor@Externo.cr', 'contador@despacho.cr']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toBe("acme: no SMTP server of its own (the service's default, else the outbox)\nallow\tauditor@externo.cr contador@despacho.cr\n");
    expect(await stored()).toEqual(['auditor@externo.cr', 'contador@despacho.cr']);
    const json = await fecr(['accounts', 'mail', 'acme', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ smtpUrl: null, hasPassword: false, from: null, replyTo: null, allow: ['auditor@externo.cr', 'contador@despacho.cr'] });

    const smtp = await fecr(['accounts', 'mail', 'acme', '--smtp-url', 'smtp://smtp.acme.cr', '--from', 'ACME <facturas@acme.cr>', '--allow', 'auditor@externo.cr']);
    expect(smtp.code, smtp.stderr).toBe(0);
    expect(smtp.stdout).toBe(['smtpUrl\tsmtp://smtp.acme.cr:587', 'from\tACME <facturas@acme.cr>', 'replyTo\t', 'allow\tauditor@externo.cr contador@despacho.cr', ''].join('\n'));

    const remove = await fecr(['accounts', 'mail', 'acme', '--disallow', 'AUDITOR@externo.cr']);
    expect(remove.code, remove.stderr).toBe(0);
    expect(remove.stdout.split('\n').at(-2)).toBe('allow\tcontador@despacho.cr');
    expect(await stored()).toEqual(['contador@despacho.cr']);
    const shown = await fecr(['accounts', 'mail', 'acme', '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ smtpUrl: 'smtp://smtp.acme.cr:587', from: 'ACME <facturas@acme.cr>', allow: ['contador@despacho.cr'] });
  });

  it('a bad address is one error line naming the flag, and nothing changes', async () => {
    const cases: [string[], RegExp][] = [
      [['--allow', 'ok@acme.cr', 'no-es-correo'], /^error: --allow: must be an e-mail address \(got "no-es-correo"\)$/],
      [['--disallow', 'tampoco'], /^error: --disallow: must be an e-mail address/],
      [['--clear', '--allow', 'ok@acme.cr'], /^error: --clear takes no other setting$/],
    ];
    for (const [flags, message] of cases) {
      const r = await fecr(['accounts', 'mail', 'acme', ...flags]);
      expect(r.code, flags.join(' ')).not.toBe(0);
      expect(r.stderr.trimEnd().split('\n'), flags.join(' ')).toEqual([expect.stringMatching(message)]);
      expect(r.stdout).toBe('');
    }
    const unknown = await fecr(['accounts', 'mail', 'nadie', '--allow', 'ok@acme.cr']);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'error: no account named nadie\n']);
    expect(await stored()).toEqual(['contador@despacho.cr']);
  });
});

describe('fecr serve: the mail settings', () => {
  const dir = tempDir('fecr-cli-serve-mail-');
  const base = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };

  it('refuses an SMTP server without a sender of the operator, and a limit below 1, before starting', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--smtp-url', 'smtp://127.0.0.1:2525'], {}, /^error: --smtp-url needs --mail-from \(or FECR_MAIL_FROM\), an address of yours/],
      [[], { FECR_SMTP_URL: 'smtp://127.0.0.1:2525' }, /^error: FECR_SMTP_URL needs --mail-from \(or FECR_MAIL_FROM\)/],
      [['--mail-resends-per-document', '0'], {}, /^error: --mail-resends-per-document: must be a whole number, at least 1 \(got "0"\)$/],
      [['--mail-resends-per-account', '2.5'], {}, /^error: --mail-resends-per-account: must be a whole number, at least 1/],
      [[], { FECR_MAIL_RESENDS_PER_ACCOUNT: 'muchos' }, /^error: FECR_MAIL_RESENDS_PER_ACCOUNT: must be a whole number, at least 1/],
    ];
    for (const [flags, extra, message] of cases) {
      const r = await runCli(['serve', ...flags], { env: { ...base, ...extra } });
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0], flags.join(' ')).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});

describe('local mode: the account is its own operator', () => {
  const home = tempDir('fecr-cli-mail-local-');
  const work = join(home, 'work');
  const env = { HOME: home, FECR_NO_KEYCHAIN: '1' };
  const fecr = (args: string[]) => runCli(args, { env, cwd: work });
  let demo: DemoResult;
  let smtp: TestSmtp;

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    smtp = await startTestSmtp();
    const r = await fecr(['demo', '--json']);
    expect(r.code, r.stderr).toBe(0);
    demo = JSON.parse(r.stdout) as DemoResult;
  }, 120_000);
  afterAll(async () => {
    await smtp?.close();
  });

  it('fecr documents email --to any address, more often than the API allows, From the issuer without mailFrom', { timeout: 120_000 }, async () => {
    const set = await fecr(['config', 'set', `smtpUrl=smtp://127.0.0.1:${smtp.port}`, '--profile', 'demo']);
    expect(set.code, set.stderr).toBe(0);
    const fe = demo.documents.find((d) => d.correo)!;
    for (let i = 0; i < 6; i++) {
      const r = await fecr(['documents', 'email', fe.clave, '--to', `copia${i}@cualquiera.cr`, '--profile', 'demo']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^correo: enviado a copia${i}@cualquiera\\.cr \\(250 `));
    }
    expect(smtp.received.map((m) => m.to)).toEqual(Array.from({ length: 6 }, (_, i) => [`copia${i}@cualquiera.cr`]));
    const issuerAddress = (await simpleParser(smtp.received[0]!.raw)).from?.value[0]?.address;
    expect(issuerAddress).toMatch(/@/);
    expect(new Set(smtp.received.map((m) => m.from))).toEqual(new Set([issuerAddress]));
  });
});
