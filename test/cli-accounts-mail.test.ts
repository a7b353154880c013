// `fecr accounts mail BASE --smtp-url … --from … --reply-to … | --clear` (issue 17), in-process against a temp data dir
// like the other `fecr accounts` verbs (test/cli-service.test.ts): the account's SMTP password is sealed in the store
// (not in the database file in clear, nor in any file of the data dir, nor in any output) and opens again for
// the mail route; without flags the settings are shown without it; --clear removes them; a bad URL, sender or
// address is one `error:` line naming the flag and a non-zero exit, and leaves the settings as they were.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { mailRouteFor } from '../src/service/mail-settings.js';
import { openService } from '../src/service/runtime.js';
import { runCli, tempDir } from './helpers/cli.js';

const dir = tempDir('fecr-cli-accounts-mail-');
const dataDir = join(dir, 'data');
const env = { HOME: dir, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1' };
const PASSWORD = 'Smtp-Cl4ve#Sellada';
const fecr = (args: string[], stdin?: string) => runCli(args, { env, ...(stdin !== undefined ? { stdin } : {}) });
/** Everything the CLI printed, to look for the password. */
const printed: string[] = [];
async function run(args: string[], stdin?: string) {
  const r = await fecr(args, stdin);
  printed.push(r.stdout, r.stderr);
  return r;
}

/** Every file under the data dir, as bytes. */
function dataFiles(d = dataDir): { file: string; bytes: Buffer }[] {
  return readdirSync(d).flatMap((name) => {
    const p = join(d, name);
    return statSync(p).isDirectory() ? dataFiles(p) : [{ file: p, bytes: readFileSync(p) }];
  });
}

/** The account's mail route as the mail job resolves it (the sealed password opened). */
async function routeOf(base: string) {
  const opened = await openService({ dataDir, env, logger: pino({ level: 'silent' }), startLocalEmulator: false, mail: { outboxDir: join(dataDir, 'outbox') } });
  try {
    const row = await opened.ctx.store.db.selectFrom('accounts').select('id').where('base', '=', base).executeTakeFirstOrThrow();
    const enc = await opened.ctx.store.db.selectFrom('account_mail').select('smtp_password_enc').where('account_id', '=', row.id).executeTakeFirst();
    return { route: await mailRouteFor(opened.ctx, row.id), sealed: enc?.smtp_password_enc ?? null };
  } finally {
    await opened.close();
  }
}

describe('fecr accounts mail', () => {
  it('shows nothing of its own for a new account', async () => {
    expect((await run(['accounts', 'create', 'acme', '--password-stdin'], 'supersecreto\n')).code).toBe(0);
    const r = await run(['accounts', 'mail', 'acme']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("acme: no SMTP server of its own (the service's default, else the outbox)\n");
    const json = await run(['accounts', 'mail', 'acme', '--json']);
    expect(JSON.parse(json.stdout)).toBeNull();
  });

  it('sets the server, From and Reply-To; the password is sealed and never printed', async () => {
    const url = `smtp://facturas%40acme.cr:${encodeURIComponent(PASSWORD)}@smtp.acme.cr:2587`;
    const set = await run(['accounts', 'mail', 'acme', '--smtp-url', url, '--from', 'ACME S.A. <facturas@acme.cr>', '--reply-to', 'cobros@acme.cr']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(
      ['smtpUrl\tsmtp://facturas%40acme.cr@smtp.acme.cr:2587 (password sealed)', 'from\tACME S.A. <facturas@acme.cr>', 'replyTo\tcobros@acme.cr', ''].join('\n'),
    );
    const shown = await run(['accounts', 'mail', 'acme', '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual({ smtpUrl: 'smtp://facturas%40acme.cr@smtp.acme.cr:2587', hasPassword: true, from: 'ACME S.A. <facturas@acme.cr>', replyTo: 'cobros@acme.cr', allow: [] });
    const list = await run(['accounts', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);

    // At rest: sealed (no file of the data dir holds it in clear, nor in base64), yet the mail job opens it.
    const files = dataFiles();
    expect(files.map((f) => f.file)).toContain(join(dataDir, 'fecr.db'));
    for (const { file, bytes } of files) {
      expect(bytes.includes(PASSWORD), file).toBe(false);
      expect(bytes.includes(Buffer.from(PASSWORD).toString('base64')), file).toBe(false);
    }
    const { route, sealed } = await routeOf('acme');
    expect(sealed).not.toBeNull();
    expect(route).toEqual({
      kind: 'smtp',
      server: { host: 'smtp.acme.cr', port: 2587, security: 'starttls', user: 'facturas@acme.cr', password: PASSWORD },
      fromAddress: 'facturas@acme.cr',
      fromName: 'ACME S.A.',
      replyTo: 'cobros@acme.cr',
    });
    // Never printed by any command so far.
    expect(printed.join('\n')).not.toContain(PASSWORD);
  });

  it('a bad URL, sender or address: one error line naming the flag, a non-zero exit, the settings unchanged', async () => {
    const cases: [string[], RegExp][] = [
      [['--smtp-url', 'http://smtp.acme.cr'], /^error: --smtp-url: must be an smtp:\/\/ or smtps:\/\/ URL \(got http:\/\/\)$/],
      [['--smtp-url', 'no es una url'], /^error: --smtp-url: must be an smtp:\/\/ or smtps:\/\/ URL/],
      [['--smtp-url', 'smtp://smtp.acme.cr?security=maybe'], /^error: --smtp-url: security must be tls, starttls or none$/],
      [['--smtp-url', 'smtp://smtp.acme.cr?foo=1'], /^error: --smtp-url: unknown parameter "foo"/],
      [['--smtp-url', 'smtp://smtp.acme.cr', '--from', 'ACME'], /^error: --from: must be an e-mail address/],
      [['--smtp-url', 'smtp://smtp.acme.cr', '--reply-to', 'cobros'], /^error: --reply-to: must be an e-mail address/],
      [['--from', 'x@acme.cr'], /^error: --from and --reply-to go with --smtp-url$/],
      [['--clear', '--smtp-url', 'smtp://smtp.acme.cr'], /^error: --clear takes no other setting$/],
    ];
    for (const [flags, message] of cases) {
      const r = await run(['accounts', 'mail', 'acme', ...flags]);
      expect(r.code, flags.join(' ')).not.toBe(0);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0], flags.join(' ')).toMatch(message);
      expect(lines.filter((l) => l.startsWith('error:')), flags.join(' ')).toHaveLength(1);
      expect(r.stderr, flags.join(' ')).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.stdout).toBe('');
    }
    const unknown = await run(['accounts', 'mail', 'nadie', '--smtp-url', 'smtp://smtp.acme.cr']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toBe('error: no account named nadie\n');
    const still = await run(['accounts', 'mail', 'acme', '--json']);
    expect(JSON.parse(still.stdout)).toMatchObject({ smtpUrl: 'smtp://facturas%40acme.cr@smtp.acme.cr:2587', hasPassword: true });
  });

  it('--clear removes the settings and the sealed password; a second --clear says there were none', async () => {
    const clear = await run(['accounts', 'mail', 'acme', '--clear']);
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stderr + clear.stdout).toContain("mail settings of acme removed: its mails follow the service's defaults");
    expect((await run(['accounts', 'mail', 'acme'])).stdout).toBe("acme: no SMTP server of its own (the service's default, else the outbox)\n");
    const { route, sealed } = await routeOf('acme');
    expect(sealed).toBeNull();
    expect(route).toEqual({ kind: 'outbox', dir: join(dataDir, 'outbox') });
    const again = await run(['accounts', 'mail', 'acme', '--clear']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr + again.stdout).toContain('acme had no mail settings of its own');
    expect(printed.join('\n')).not.toContain(PASSWORD);
  });
});
