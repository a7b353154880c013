// `fecr webhooks listen --forward-to URL` in local mode, in-process with injected streams and a temp HOME: a real
// receiver (Standard Webhooks verification) as the forward target, a document sent and decided by the embedded
// emulator, the delivery forwarded with its exact body and signature headers, the line printed, the service seeing
// the receiver's status (and a 502 when the forward fails), and the previous webhook URL put back on Ctrl-C.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/program.js';
import { fixtureBody } from './helpers/api-context.js';
import { runCli, tempDir } from './helpers/cli.js';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from './helpers/e2e.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { spawnFecr, type Spawned } from './helpers/spawn.js';
import { BIN } from './helpers/bin.js';
import { childEnv } from './helpers/hermetic-env.js';
import { spawn } from 'node:child_process';

const dir = tempDir('fecr-listen-');
const work = join(dir, 'work');
const env = { HOME: dir, FECR_DATA_DIR: join(dir, 'data'), FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[], opts: { stdin?: string } = {}) => runCli(args, { env, cwd: work, ...opts });
const ORIGINAL = 'http://127.0.0.1:9/hooks/original';
let receiver: WebhookReceiver;

interface Running {
  done: Promise<number>;
  stdout: () => string;
  stderr: () => string;
}

/** Starts a long-running command in-process; its output is readable while it runs. */
function start(args: string[], e: Record<string, string> = env): Running {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const stdin = new PassThrough();
  stdin.end();
  const done = main(args, { io: { stdin, stdout, stderr, env: e, cwd: work, stdoutIsTTY: false, stdinIsTTY: false } });
  return { done, stdout: () => out, stderr: () => err };
}

async function ready(r: Running): Promise<void> {
  await Promise.race([
    waitUntil(() => r.stderr().includes('Ready: listening on'), { timeoutMs: 30_000, label: 'listen to be ready', describe: r.stderr }),
    r.done.then((code) => {
      throw new Error(`listen exited ${code}: ${r.stderr()}`);
    }),
  ]);
}

/** Ctrl-C as the terminal sends it (the command waits on SIGINT/SIGTERM). */
function ctrlC(): void {
  process.emit('SIGINT', 'SIGINT');
}

async function webhookUrl(): Promise<string | null> {
  const r = await fecr(['accounts', 'list', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { base: string; webhookUrl: string | null }[]).find((a) => a.base === 'local')!.webhookUrl;
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  receiver = await startWebhookReceiver();
  const t = makeTestIssuer();
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(t.issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
  // The local account's "production" webhook, whose secret the receiver knows.
  const set = await fecr(['accounts', 'set', 'local', '--webhook-url', ORIGINAL]);
  expect(set.code, set.stderr).toBe(0);
  receiver.secret = set.stdout.trim();
  expect(receiver.secret).toMatch(/^whsec_/);
});

afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fecr webhooks listen (local mode)', () => {
  it('forwards a delivery with its exact body and signature, prints it, reports the receiver status, puts the URL back', { timeout: 120_000 }, async () => {
    const listen = start(['webhooks', 'listen', '--forward-to', receiver.url, '--json']);
    await ready(listen);
    expect(listen.stderr()).toContain(`it was ${ORIGINAL} and is put back on exit`);
    // The account now delivers to the listener (same secret: no new one printed).
    const pointed = await webhookUrl();
    expect(pointed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(listen.stderr()).not.toContain('whsec_');

    writeFileSync(join(work, 'fe.json'), JSON.stringify({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: 7001 }));
    const sent = await fecr(['send', 'fe.json', '--wait', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const { clave, estado } = JSON.parse(sent.stdout) as { clave: string; estado: string };
    expect(estado).toBe('aceptado');

    // The real receiver got it, verified with the account's own secret: same body bytes, same signature headers.
    await waitUntil(() => receiver.received.some((r) => r.clave === clave), { timeoutMs: 30_000, label: 'the forwarded delivery' });
    const got = receiver.received.find((r) => r.clave === clave)!;
    expect(got.verified, got.error).toBe(true);
    expect(got.headers['webhook-id']).toBe(`msg_${clave}`);
    expect(got.payload.folioType).toBe('INVOICE');
    expect(Buffer.from(got.payload.folioDetails[0].encodedFile, 'base64').toString('utf8')).toContain(`<Clave>${clave}</Clave>`);

    // One JSON line per delivery on stdout, with the forward's status and latency.
    await waitUntil(() => listen.stdout().includes(clave), { timeoutMs: 10_000, label: 'the printed line', describe: listen.stdout });
    const line = listen.stdout().trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.clave === clave);
    expect(line).toMatchObject({ webhookId: `msg_${clave}`, clave, mensaje: 1, estado: 'aceptado', forward: { url: receiver.url, status: 204 }, answered: 204 });
    expect(line.forward.ms).toBeGreaterThanOrEqual(0);

    // The service saw the receiver's answer.
    await waitUntil(
      async () => {
        const l = await fecr(['webhooks', 'list', '--account', 'local', '--json']);
        return (JSON.parse(l.stdout) as { clave: string; state: string; lastStatus: number }[]).some((d) => d.clave === clave && d.state === 'entregado' && d.lastStatus === 204);
      },
      { timeoutMs: 15_000, label: 'the delivery to be entregado with 204' },
    );

    ctrlC();
    expect(await listen.done).toBe(0);
    expect(listen.stderr()).toContain(`webhook URL put back: ${ORIGINAL}`);
    expect(await webhookUrl()).toBe(ORIGINAL);
  });

  it('the built bundle (node bin/fecr.js webhooks listen) forwards a verified delivery: not "request is not a function"', { timeout: 120_000 }, async () => {
    // Issue 38: the sources passed while dist/ forwarded nothing (a lazy import of undici lost its named exports).
    const child = spawn(process.execPath, [BIN, 'webhooks', 'listen', '--forward-to', receiver.url, '--json'], { cwd: work, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('close', r));
    try {
      await waitUntil(() => err.includes('Ready: listening on'), { timeoutMs: 30_000, label: 'the bundle\'s listen to be ready', describe: () => err });
      writeFileSync(join(work, 'fe-bundle.json'), JSON.stringify({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: 7101 }));
      const sent = await fecr(['send', 'fe-bundle.json', '--wait', '--json']);
      expect(sent.code, sent.stderr).toBe(0);
      const { clave } = JSON.parse(sent.stdout) as { clave: string };
      await waitUntil(() => receiver.received.some((r) => r.clave === clave), { timeoutMs: 30_000, label: 'the forwarded delivery', describe: () => out + err });
      const got = receiver.received.find((r) => r.clave === clave)!;
      expect(got.verified, got.error).toBe(true);
      await waitUntil(() => out.includes(clave), { timeoutMs: 10_000, label: 'the printed line', describe: () => out + err });
      expect(JSON.parse(out.trim().split('\n').find((l) => l.includes(clave))!)).toMatchObject({ clave, forward: { url: receiver.url, status: 204 }, answered: 204 });
      expect(out + err).not.toContain('is not a function');
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(err).toContain(`webhook URL put back: ${ORIGINAL}`);
    expect(await webhookUrl()).toBe(ORIGINAL);
  });

  it('a failing forward is printed and answered 502, so the service retries; plain text lines', { timeout: 120_000 }, async () => {
    const listen = start(['webhooks', 'listen', '--forward-to', 'http://127.0.0.1:1/closed']);
    await ready(listen);
    const list = await fecr(['webhooks', 'list', '--account', 'local', '--json']);
    const first = (JSON.parse(list.stdout) as { id: number; clave: string }[])[0]!;
    const replay = await fecr(['webhooks', 'replay', String(first.id), '--account', 'local']);
    expect(replay.code, replay.stderr).toBe(0);
    // The listener's worker delivers the replay; the line names the clave, the failure and the 502.
    await waitUntil(() => listen.stdout().includes(first.clave), { timeoutMs: 30_000, label: 'the printed line', describe: listen.stdout });
    const text = listen.stdout().split('\n').find((l) => l.includes(first.clave))!;
    expect(text).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}  aceptado\s+\d{50}  msg_\d{50}  → http:\/\/127\.0\.0\.1:1\/closed failed: ECONNREFUSED \(\d+ ms\) \[answered 502\]$/);
    await waitUntil(
      async () => {
        const l = await fecr(['webhooks', 'list', '--account', 'local', '--json']);
        return (JSON.parse(l.stdout) as { id: number; state: string; lastStatus: number }[]).some((d) => d.id === first.id && d.state === 'pendiente' && d.lastStatus === 502);
      },
      { timeoutMs: 15_000, label: 'the delivery to wait for a retry after the 502' },
    );
    ctrlC();
    expect(await listen.done).toBe(0);
    expect(await webhookUrl()).toBe(ORIGINAL);
  });

  it('usage errors: a bad --forward-to or --port is exit 2 and leaves the webhook URL alone', async () => {
    const bad = await fecr(['webhooks', 'listen', '--forward-to', 'ftp://example.com/x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--forward-to must be an http or https URL');
    const port = await fecr(['webhooks', 'listen', '--port', '70000']);
    expect(port.code).toBe(2);
    expect(await webhookUrl()).toBe(ORIGINAL);
  });
});

describe('fecr webhooks listen (remote mode, real fecr serve on this machine)', () => {
  const PASSWORD = 'clave-de-listen-2026';
  const serverData = join(dir, 'server-data');
  const serverEnv = { HOME: join(dir, 'server-home'), FECR_DATA_DIR: serverData, FECR_NO_KEYCHAIN: '1' };
  const clientEnv = { HOME: join(dir, 'client-home'), FECR_NO_KEYCHAIN: '1', FECR_PROFILE: 'hosted' };
  const client = (args: string[], stdin?: string) => runCli(args, { env: clientEnv, cwd: work, ...(stdin !== undefined ? { stdin } : {}) });
  let serve: Spawned<{ authUrl: string; baseUrl: string }> | undefined;
  let remoteReceiver: WebhookReceiver;

  afterAll(async () => {
    await serve?.stop();
    await remoteReceiver?.close();
  });

  it('points the hosted account at the listener, forwards a verified delivery, puts the URL back', { timeout: 180_000 }, async () => {
    remoteReceiver = await startWebhookReceiver();
    const acct = await runCli(['accounts', 'create', 'acme', '--password-stdin', '--webhook-url', ORIGINAL, '--json'], { env: serverEnv, stdin: `${PASSWORD}\n` });
    expect(acct.code, acct.stderr).toBe(0);
    remoteReceiver.secret = JSON.parse(acct.stdout).webhookSecret;
    serve = await spawnFecr(['serve', '--data-dir', serverData, '--emulator-delay', '50'], { env: serverEnv });
    for (const [k, v] of [
      ['authUrl', serve.ready.authUrl],
      ['baseUrl', serve.ready.baseUrl],
    ] as const) {
      const r = await client(['config', 'set', k, v]);
      expect(r.code, r.stderr).toBe(0);
    }
    const login = await client(['login', '--base', 'acme', '--password-stdin'], `${PASSWORD}\n`);
    expect(login.code, login.stderr).toBe(0);
    const reg = await client(['emisor', 'register', 'issuer.json']);
    expect(reg.code, reg.stderr).toBe(0);

    const listen = start(['webhooks', 'listen', '--forward-to', remoteReceiver.url, '--json'], clientEnv);
    await ready(listen);
    expect(listen.stderr()).toContain(`it was ${ORIGINAL} and is put back on exit`);
    writeFileSync(join(work, 'fe-remote.json'), JSON.stringify({ ...fixtureBody('01-fe-servicios-13'), numeroReferencia: 7101 }));
    const sent = await client(['send', 'fe-remote.json', '--wait', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const { clave } = JSON.parse(sent.stdout) as { clave: string };
    await waitUntil(() => remoteReceiver.received.some((r) => r.clave === clave), { timeoutMs: 60_000, label: 'the forwarded delivery' });
    const got = remoteReceiver.received.find((r) => r.clave === clave)!;
    expect(got.verified, got.error).toBe(true);
    await waitUntil(() => listen.stdout().includes(clave), { timeoutMs: 10_000, label: 'the printed line', describe: listen.stdout });
    expect(JSON.parse(listen.stdout().trim().split('\n').find((l) => l.includes(clave))!)).toMatchObject({ clave, estado: 'aceptado', answered: 204 });

    ctrlC();
    expect(await listen.done).toBe(0);
    const accounts = await runCli(['accounts', 'list', '--json'], { env: serverEnv });
    expect((JSON.parse(accounts.stdout) as { base: string; webhookUrl: string }[]).find((a) => a.base === 'acme')!.webhookUrl).toBe(ORIGINAL);
  });
});
