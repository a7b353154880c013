import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { SilentExit } from '../../cli/errors.js';
import { resolvePath, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';

/** One fixture of each kind the spec names. */
const DEMO_DOCUMENTS = [
  ['FE', '01-fe-servicios-13.json'],
  ['FE exonerada', '06-fe-exoneracion-autorizacion.json'],
  ['NC', '09-nc-devolucion.json'],
  ['TE', '10-te-sin-receptor.json'],
  ['TE extranjero', '11-te-extranjero.json'],
] as const;

const DEMO_PIN = '1234';

export async function run(ctx: Ctx, opts: { out: string; json?: boolean }): Promise<void> {
  const [{ createTestP12 }, { loadP12 }, { issueComprobante }, { securityCodeFrom }, { verifyXades }, xsd, kinds] = await Promise.all([
    import('../../core/sign/testcert.js'),
    import('../../core/sign/p12.js'),
    import('../../core/comprobante.js'),
    import('../../core/clave.js'),
    import('../../core/sign/verify.js'),
    import('../../core/xsd/index.js'),
    import('../../core/xml/kinds.js'),
  ]);
  const outDir = resolvePath(ctx.io, opts.out);
  await mkdir(outDir, { recursive: true });
  const now = ctx.now();

  info(ctx, 'creating a test certificate for 3101123456 (SOFTWARE TICO SOCIEDAD ANONIMA)…');
  const p12 = createTestP12({ id: '3101123456', type: '02', pin: DEMO_PIN, name: 'SOFTWARE TICO SOCIEDAD ANONIMA' });
  await writeFile(path.join(outDir, 'issuer.p12'), p12, { mode: 0o600 });
  const creds = loadP12(p12, DEMO_PIN, now);
  const issuer = demoIssuer(p12.toString('base64'));

  const validator = xsd.createXsdValidator();
  const rows: { kind: string; clave: string; total: string; moneda: string; signature: string; xsd: string; file: string }[] = [];
  let failed = false;
  for (const [label, name] of DEMO_DOCUMENTS) {
    const body = JSON.parse(await readFile(new URL(`../../../fixtures/documents/${name}`, import.meta.url), 'utf8')) as unknown;
    const result = issueComprobante(body, issuer, creds, {
      securityCode: securityCodeFrom(ctx.randomBytes),
      signingTime: now,
      newId: () => Buffer.from(ctx.randomBytes(16)).toString('hex'),
    });
    if (!result.ok) {
      failed = true;
      writeLine(ctx.io.stderr, `${label}: ${result.findings.map((f) => `${f.path}: ${f.message}`).join('; ')}`);
      continue;
    }
    const report = verifyXades(result.xml, now);
    const [x] = await validator.validate(result.xml, kinds.KINDS[result.doc.kind].schema);
    const file = path.join(opts.out, `${result.doc.clave}.xml`);
    await writeFile(path.join(outDir, `${result.doc.clave}.xml`), result.xml);
    if (!report.ok || !x?.valid) failed = true;
    rows.push({
      kind: label,
      clave: result.doc.clave,
      total: result.totals.resumen.totalComprobante.toFixed(5),
      moneda: result.doc.moneda.codigoMoneda,
      signature: report.ok ? 'valid' : 'INVALID',
      xsd: x?.valid ? 'valid' : 'INVALID',
      file,
    });
  }
  if (opts.json) printJson(ctx, rows);
  else {
    writeLine(
      ctx.io.stdout,
      renderTable(ctx, ['kind', 'clave', 'totalComprobante', 'moneda', 'signature', 'xsd'], rows.map((r) => [r.kind, r.clave, r.total, r.moneda, r.signature, r.xsd])),
    );
    info(ctx, `files written to ${opts.out}/`);
  }
  if (failed) throw new SilentExit(1);
}

function demoIssuer(certificadoHacienda: string) {
  return {
    identificacion: '3101123456',
    tipoIdentificacion: '02' as const,
    codigoActividad: '620100',
    sucursal: 1,
    nombre: 'SOFTWARE TICO SOCIEDAD ANONIMA',
    nombreComercial: 'Software Tico',
    telefono: '+506 2222-3333',
    correoElectronico: 'facturas@softwaretico.cr',
    ubicacion: { provincia: '1', canton: '01', distrito: '08', barrio: 'Barrio Escalante', direccion: 'Avenida 7, calles 31 y 33, casa 3125' },
    ambiente: 2,
    usuarioHacienda: 'cpj-3-101-123456@stag.comprobanteselectronicos.go.cr',
    claveHacienda: Buffer.from('demo').toString('base64'),
    pinCertificado: DEMO_PIN,
    certificadoHacienda,
  };
}
