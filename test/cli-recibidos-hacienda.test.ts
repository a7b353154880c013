// Issue 26 (1) through the CLI, as reported: `fecr hacienda serve --supplier-invoices ID --supplier-out entrada/` (here
// the same emulator in process: its test suppliers issue into a Hacienda of their own), then in a local profile
// `fecr recibidos import entrada/` and `fecr recibidos aceptar CLAVE`. The profile's Hacienda (its embedded emulator) has
// no record of the suppliers' documents: import says so per file, aceptar refuses in one line unless --force, and the
// forced MensajeReceptor is rejected. The resumen leaves that IVA out and lists the documents apart with why; once the
// supplier's document reaches the profile's Hacienda, a second aceptar gets a new consecutivo and the IVA is counted
// once; `show` keeps the first answer in the history.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../src/core/money.js';
import { startEmulator, type RunningEmulator } from '../src/emulator/index.js';
import { ReceptionClient, resolveEndpoints } from '../src/hacienda/index.js';
import { runCli, tempDir } from './helpers/cli.js';
import { makeTestIssuer } from './helpers/issuer.js';

const root = tempDir('fecr-recibidos-hacienda-');
const test = makeTestIssuer();
const BUYER = { tipo: '02', numero: '3101123456', nombre: test.issuer.nombre };
const work = join(root, 'work');
const dataDir = join(root, 'data');
const env: Record<string, string> = { HOME: root, FECR_DATA_DIR: dataDir, FECR_NO_KEYCHAIN: '1' };
const fecr = (args: string[]) => runCli(args, { env, cwd: work });
let suppliers: RunningEmulator;
let docs: { clave: string; xml: Buffer; proveedor: { identificacion: string } }[] = [];

beforeAll(async () => {
  mkdirSync(join(work, 'entrada'), { recursive: true });
  suppliers = await startEmulator({ processingDelayMs: 10, validationThreads: 0 });
  const res = await fetch(`${suppliers.url}/_emulator/suppliers/issue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receptor: BUYER, cantidad: 2 }) });
  const { documentos } = (await res.json()) as { documentos: { clave: string; xml: string; proveedor: { identificacion: string } }[] };
  docs = documentos.map((d) => ({ clave: d.clave, xml: Buffer.from(d.xml, 'base64'), proveedor: d.proveedor }));
  for (const d of docs) writeFileSync(join(work, 'entrada', `${d.clave}.xml`), d.xml);
  writeFileSync(join(work, 'issuer.json'), JSON.stringify(test.issuer));
  const reg = await fecr(['emisor', 'register', 'issuer.json']);
  expect(reg.code, reg.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await suppliers?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The supplier's document reaches the profile's Hacienda (its embedded emulator's state, between two commands). */
async function supplierSendsToProfileHacienda(doc: (typeof docs)[number]): Promise<void> {
  const emu = await startEmulator({ dataFile: join(dataDir, 'emulator.db'), processingDelayMs: 10, validationThreads: 0 });
  const client = new ReceptionClient({ endpoints: resolveEndpoints('local', { baseUrl: emu.url }), credentials: { username: `proveedor-${doc.proveedor.identificacion}`, password: 'x' } });
  try {
    const fecha = /<FechaEmision>([^<]+)</.exec(doc.xml.toString('utf8'))![1]!;
    await client.submit({ clave: doc.clave, fecha, emisor: { tipoIdentificacion: '02', numeroIdentificacion: doc.proveedor.identificacion }, receptor: { tipoIdentificacion: BUYER.tipo, numeroIdentificacion: BUYER.numero }, comprobanteXml: doc.xml });
    await emu.state.whenIdle();
    expect((await client.getStatus(doc.clave)).estado).toBe('aceptado');
  } finally {
    await client.close();
    await emu.close();
  }
}

interface Summary {
  documentos: number;
  totales: { ivaAcreditable: string };
  excluidos: { clave: string; motivo: string; consecutivoReceptor: string | null }[];
}

describe('fecr recibidos: a MensajeReceptor Hacienda rejects', () => {
  it('import warns per file; aceptar refuses unless --force; rejected: not counted, listed apart; answered again: counted once', async () => {
    const [a, b] = docs.map((d) => d.clave) as [string, string];
    const imp = await fecr(['recibidos', 'import', 'entrada']);
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toContain('imported 2 files: 2 valid, 0 refused; 2 new, 0 already imported; 2 not accepted by Hacienda yet (see the warnings)');
    for (const c of [a, b]) expect(imp.stderr).toContain(`warning: entrada/${c}.xml: Hacienda has no record of this comprobante (yet): a MensajeReceptor about it would be rejected`);

    const refused = await fecr(['recibidos', 'aceptar', a]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: ${a}: Hacienda has no record of this comprobante (asked now): a MensajeReceptor about it would be rejected; answer it once Hacienda has it, or now with --force\n`);

    const forced = await fecr(['recibidos', 'aceptar', a, '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(3);
    const first = JSON.parse(forced.stdout) as { consecutivoReceptor: string; respuestaEstado: string; montoTotalImpuestoAcreditar: string };
    expect(first.respuestaEstado).toBe('rechazado');

    const det = JSON.parse((await fecr(['recibidos', 'show', a, '--json'])).stdout) as { fechaEmision: string; totalImpuesto: string; situacionIva: string };
    expect(det.situacionIva).toBe('respuesta_rechazada');
    const mes = det.fechaEmision.slice(0, 7);
    const s1 = JSON.parse((await fecr(['recibidos', 'resumen', mes, '--issuer', test.issuer.identificacion, '--json'])).stdout) as Summary;
    expect(s1.documentos).toBe(0);
    expect(s1.totales.ivaAcreditable).toBe('0.00000');
    expect(s1.excluidos.map((x) => [x.clave, x.motivo]).sort()).toEqual(
      [
        [a, 'respuesta_rechazada'],
        [b, 'sin_respuesta'],
      ].sort(),
    );
    const table = await fecr(['recibidos', 'resumen', mes]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^total\t/m);
    expect(table.stdout).toContain(`${mes}: 0 counted (accepted fully or partly, and the MensajeReceptor accepted by Hacienda); 2 not counted (1 awaiting an answer, 0 rejected); 0 refused at import`);
    expect(table.stdout).toContain(`MensajeReceptor ${first.consecutivoReceptor}: not counted: Hacienda rejected the MensajeReceptor (answer it again)`);
    expect(table.stdout).toMatch(new RegExp(`^  ${b} .*: not counted: not answered yet$`, 'm'));

    // Not stuck ("ya fue respondido" before issue 26): refused only while Hacienda has no record of it.
    const rej = await fecr(['recibidos', 'rechazar', a]);
    expect(rej.code).toBe(1);
    expect(rej.stderr).not.toMatch(/ya fue respondido/);
    expect(rej.stderr).toMatch(/Hacienda has no record of this comprobante/);

    await supplierSendsToProfileHacienda(docs[0]!);
    const again = await fecr(['recibidos', 'aceptar', a, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout) as { consecutivoReceptor: string; respuestaEstado: string };
    expect(second.respuestaEstado).toBe('aceptado');
    expect(second.consecutivoReceptor.slice(8, 10)).toBe('05');
    expect(second.consecutivoReceptor).not.toBe(first.consecutivoReceptor);

    const s2 = JSON.parse((await fecr(['recibidos', 'resumen', mes, '--issuer', test.issuer.identificacion, '--json'])).stdout) as Summary;
    expect(s2.documentos).toBe(1);
    expect(s2.totales.ivaAcreditable).toBe(dec(det.totalImpuesto).toFixed(5));
    expect(s2.excluidos.map((x) => [x.clave, x.motivo])).toEqual([[b, 'sin_respuesta']]);

    const show = await fecr(['recibidos', 'show', a]);
    expect(show.stdout).toMatch(/^IVA\s+counted \(accepted, and Hacienda accepted the MensajeReceptor\)$/m);
    expect(show.stdout).toMatch(new RegExp(`^earlier answer 1\\s+Mensaje 1 \\(aceptado\\), ${a}-${first.consecutivoReceptor}, Hacienda: rechazado \\(.*con la clave ${a} .*\\), replaced `, 'm'));
    expect(show.stdout).not.toMatch(/^warning\s+hacienda/m);
    // Accepted by Hacienda: answered for good.
    const third = await fecr(['recibidos', 'rechazar', a]);
    expect(third.code).toBe(1);
    expect(third.stderr).toMatch(/ya fue respondido \(aceptado\)/);
  }, 120_000);
});
