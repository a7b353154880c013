/**
 * Emulator throughput (`npm run bench:emulator`): receptions per second the local Hacienda emulator
 * sustains with full validation (XSD, signature, signer, clave, consecutivo, totals) on this machine.
 * The emulator runs as its own process (`fecr hacienda serve --delay 0`); this process is the load:
 * it signs N 10-line invoices up front, gets one IdP token, POSTs them with bounded concurrency over a
 * keep-alive pool, then waits until the emulator has given every verdict.
 * Usage: npx tsx bench/emulator.ts [N=1000] [concurrency=32]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { Pool, request } from 'undici';
import { issueComprobante } from '../src/core/comprobante.js';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { ISSUER } from '../test/helpers/bodies.js';
import { tenLineInvoice } from './sign.js';

const N = Number(process.argv[2] ?? 1000);
const CONCURRENCY = Number(process.argv[3] ?? 32);

const child = spawn(process.execPath, [...(process.env.EMU_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/emuprof'] : []), new URL('../bin/fecr.js', import.meta.url).pathname, 'hacienda', 'serve', '--delay', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url: string = await new Promise((resolve, reject) => {
  createInterface({ input: child.stdout! }).once('line', (l) => resolve((JSON.parse(l) as { url: string }).url));
  child.once('exit', (c) => reject(new Error(`emulator exited ${c}`)));
});

try {
  const pin = '1234';
  const p12 = createTestP12({ id: ISSUER.identificacion, type: '02', pin });
  const creds = loadP12(p12, pin, new Date());
  const issuer = { ...ISSUER, pinCertificado: pin, certificadoHacienda: p12.toString('base64') };
  const t0 = performance.now();
  const docs = Array.from({ length: N }, (_, i) => {
    const body = { ...tenLineInvoice(), numeroReferencia: i + 1, fechaEmision: new Date().toISOString() };
    const r = issueComprobante(body, issuer, creds, { securityCode: String(i).padStart(8, '0'), signingTime: new Date(), newId: () => randomBytes(8).toString('hex') });
    if (!r.ok) throw new Error(JSON.stringify(r.findings));
    return {
      clave: r.doc.clave,
      fecha: r.doc.fechaEmision,
      emisor: { tipoIdentificacion: '02', numeroIdentificacion: ISSUER.identificacion },
      receptor: { tipoIdentificacion: '02', numeroIdentificacion: '4000001021' },
      comprobanteXml: Buffer.from(r.xml).toString('base64'),
    };
  });
  const signMs = performance.now() - t0;

  const token = await request(`${url}/auth/realms/rut/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'api-prod', username: 'bench@fecr', password: 'x' }).toString(),
  }).then((r) => r.body.json() as Promise<{ access_token: string }>);

  const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
  const start = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < docs.length) {
        const doc = docs[next++]!;
        const r = await pool.request({
          path: '/recepcion/v1/recepcion',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `bearer ${token.access_token}` },
          body: JSON.stringify(doc),
        });
        await r.body.dump();
        if (r.statusCode !== 202 && r.statusCode !== 201) failed++;
      }
    }),
  );
  const postedMs = performance.now() - start;
  let health: { pending: number; receptions: number };
  do {
    await new Promise((r) => setTimeout(r, 20));
    health = (await request(`${url}/_emulator/health`).then((r) => r.body.json())) as typeof health;
  } while (health.pending > 0 || health.receptions < N - failed);
  const doneMs = performance.now() - start;
  const rec = (await request(`${url}/_emulator/receptions`).then((r) => r.body.json())) as { receptions: { estado: string }[] };
  const accepted = rec.receptions.filter((x) => x.estado === 'aceptado').length;
  await pool.close();
  console.log(
    JSON.stringify(
      {
        machine: `${os.cpus()[0]?.model} × ${os.cpus().length}, Node ${process.version}`,
        date: new Date().toISOString(),
        documents: N,
        concurrency: CONCURRENCY,
        signingUpFrontMs: Math.round(signMs),
        postsPerSecond: Math.round((N / postedMs) * 1000),
        verdictsPerSecond: Math.round((N / doneMs) * 1000),
        failedPosts: failed,
        aceptado: accepted,
      },
      null,
      2,
    ),
  );
} finally {
  child.kill('SIGTERM');
}
