import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../cli/context.js';
import { UsageError, UserError } from '../../cli/errors.js';
import { certificateFailure } from '../../cli/certificate.js';
import { readAll, readInput, resolvePath, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { packageUrl } from '../../core/package-root.js';

export interface InitFlags {
  p12?: string;
  pinStdin?: boolean;
  force?: boolean;
  json?: boolean;
}

/** The issuer of the templates without --p12: the fixtures' issuer, which `fecr certs create-test --id 3101123456` certifies. */
export const TEMPLATE_ISSUER_ID = '3101123456';

/** Placeholders for the two secrets `fecr emisor register … --p12 FILE --pin-stdin` fills in. */
export const P12_PLACEHOLDER = 'REPLACE: base64 of your .p12 (or: fecr emisor register issuer.json --p12 FILE --pin-stdin)';
export const PIN_PLACEHOLDER = 'REPLACE: the PIN of your .p12';

/** One body per kind the service accepts, from the reference fixtures. */
export const TEMPLATE_BODIES: readonly { file: string; fixture: string; numeroReferencia: number }[] = [
  { file: 'fe.json', fixture: '01-fe-servicios-13', numeroReferencia: 1 },
  { file: 'fe-exonerada.json', fixture: '06-fe-exoneracion-autorizacion', numeroReferencia: 2 },
  { file: 'nc.json', fixture: '09-nc-devolucion', numeroReferencia: 1 },
  { file: 'te.json', fixture: '10-te-sin-receptor', numeroReferencia: 1 },
  { file: 'te-extranjero.json', fixture: '11-te-extranjero', numeroReferencia: 2 },
  { file: 'nd.json', fixture: '14-nd-ajuste-servicios', numeroReferencia: 1 },
  { file: 'fec.json', fixture: '17-fec-agricultor', numeroReferencia: 1 },
  { file: 'fee.json', fixture: '20-fee-cafe-usd', numeroReferencia: 1 },
  { file: 'rep.json', fixture: '23-rep-credito-90-dias', numeroReferencia: 1 },
];

export const ISSUER_FILE = 'issuer.json';

interface Certificate {
  base64: string;
  pin: string;
  identificacion?: string;
  tipoIdentificacion?: string;
  subject: string;
}

/** The issuer record of the templates (the spec's registration shape), placeholders where the user's data goes. */
export function issuerTemplate(cert?: Certificate): Record<string, unknown> {
  const id = cert?.identificacion ?? TEMPLATE_ISSUER_ID;
  const tipo = cert?.tipoIdentificacion ?? (cert ? tipoFor(id) : '02');
  const dashed = tipo === '02' && id.length === 10 ? `${id[0]}-${id.slice(1, 4)}-${id.slice(4)}` : id;
  return {
    identificacion: id,
    tipoIdentificacion: tipo,
    nombre: 'MI EMPRESA SOCIEDAD ANONIMA',
    nombreComercial: 'Mi Empresa',
    codigoActividad: '6201.0',
    sucursal: 1,
    telefono: '+506 2222-3333',
    correoElectronico: 'facturas@miempresa.example.cr',
    ubicacion: { provincia: '1', canton: '01', distrito: '08', barrio: 'Barrio Escalante', direccion: 'Avenida 7, calles 31 y 33, casa 3125' },
    ambiente: 2,
    usuarioHacienda: `${tipo === '01' ? 'cpf' : 'cpj'}-${dashed}@stag.comprobanteselectronicos.go.cr`,
    claveHacienda: Buffer.from('REPLACE: your Hacienda password').toString('base64'),
    pinCertificado: cert?.pin ?? PIN_PLACEHOLDER,
    certificadoHacienda: cert?.base64 ?? P12_PLACEHOLDER,
  };
}

function tipoFor(id: string): string {
  return id.length === 9 ? '01' : id.length === 10 ? '02' : id.length >= 11 ? '03' : '02';
}

/** A fixture body made this issuer's: its identificación and activity, dated `fechaEmision`, its own number. */
export async function bodyTemplate(t: (typeof TEMPLATE_BODIES)[number], issuer: Record<string, unknown>, fechaEmision: string): Promise<Record<string, unknown>> {
  const fixture = JSON.parse(await readFile(packageUrl(`fixtures/documents/${t.fixture}.json`), 'utf8')) as Record<string, unknown>;
  // Key order as in the fixture; the issuer's fields replace the fixture issuer's.
  return {
    ...fixture,
    emisor: issuer.identificacion,
    numeroReferencia: t.numeroReferencia,
    codigoActividad: issuer.codigoActividad,
    fechaEmision,
  };
}

export async function run(ctx: Ctx, dirArg: string, opts: InitFlags): Promise<void> {
  if (opts.pinStdin && !opts.p12) throw new UsageError('--pin-stdin is the PIN of --p12 FILE: give both, or neither');
  if (opts.p12 && !opts.pinStdin) throw new UsageError('--p12 needs the PIN of the .p12: --pin-stdin (e.g. echo "$PIN" | fecr init --p12 FILE --pin-stdin)');
  const dir = resolvePath(ctx.io, dirArg);
  const shown = (f: string) => (dirArg === '.' ? f : path.join(dirArg, f));
  const files = [ISSUER_FILE, ...TEMPLATE_BODIES.map((b) => b.file)];

  if (!opts.force) {
    const present: string[] = [];
    for (const f of files) if (await exists(path.join(dir, f))) present.push(f);
    if (present.length > 0) {
      throw new UserError(`${present.map(shown).join(', ')} ${present.length === 1 ? 'exists' : 'exist'} already: nothing written (fecr init --force overwrites them)`);
    }
  }

  const cert = opts.p12 ? await readCertificate(ctx, opts.p12) : undefined;
  const issuer = issuerTemplate(cert);
  const { formatCr } = await import('../../core/dates.js');
  const fechaEmision = formatCr(ctx.now());
  const bodies = await Promise.all(TEMPLATE_BODIES.map(async (t) => [t.file, await bodyTemplate(t, issuer, fechaEmision)] as const));

  try {
    await mkdir(dir, { recursive: true });
    const flag = opts.force ? 'w' : 'wx';
    // issuer.json holds (or will hold) the Hacienda password, the .p12 and its PIN.
    await writeFile(path.join(dir, ISSUER_FILE), JSON.stringify(issuer, null, 2) + '\n', { mode: 0o600, flag });
    await chmod(path.join(dir, ISSUER_FILE), 0o600);
    for (const [file, body] of bodies) await writeFile(path.join(dir, file), JSON.stringify(body, null, 2) + '\n', { flag });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EEXIST') throw new UserError(`${err.path ? path.relative(ctx.io.cwd, err.path) : 'a file'} appeared while writing (fecr init --force overwrites it)`);
    throw new UserError(`${dirArg}: cannot write (${err.code ?? err.message})`);
  }

  const id = String(issuer.identificacion);
  if (opts.json) {
    printJson(ctx, { dir: dirArg, files: files.map(shown), identificacion: id, certificate: cert ? opts.p12 : null });
    return;
  }
  for (const f of files) writeLine(ctx.io.stdout, shown(f));
  info(
    ctx,
    cert
      ? `${shown(ISSUER_FILE)}: issuer ${id} with the certificate of ${opts.p12} and its PIN (mode 0600); edit the names, contact, location, activity and Hacienda user and password`
      : `${shown(ISSUER_FILE)}: issuer ${id} (the test issuer of fecr certs create-test --id ${id} --type 02); edit it for yours. Its certificate and PIN are placeholders: register with --p12 FILE --pin-stdin`,
  );
  info(ctx, `bodies for issuer ${id}, dated now; numeroReferencia is the document's consecutive number: raise it for each new document`);
  info(
    ctx,
    `next: fecr validate ${shown('fe.json')} --issuer ${shown(ISSUER_FILE)}; fecr emisor register ${shown(ISSUER_FILE)}${cert ? '' : ' --p12 FILE --pin-stdin'}; fecr send ${shown('fe.json')} --wait`,
  );
}

async function readCertificate(ctx: Ctx, file: string): Promise<Certificate> {
  const bytes = await readInput(ctx.io, file);
  const pin = (await readAll(ctx.io.stdin)).toString('utf8').split(/\r?\n/)[0] ?? '';
  if (!pin) throw new UsageError('no PIN on stdin (--pin-stdin)');
  const { describeP12 } = await import('../../core/sign/p12.js');
  let described;
  try {
    described = describeP12(bytes, pin, ctx.now());
  } catch (e) {
    throw new UserError(`${file}: ${certificateFailure(e) ?? `cannot open the certificate (${(e as Error).message})`}`);
  }
  if (!described.hasPrivateKey) throw new UserError(`${file}: holds no private key, so it cannot sign`);
  if (described.validity !== 'valid') info(ctx, `warning: ${file}: the certificate is ${described.validity} (${described.certificate.notAfter.toISOString().slice(0, 10)})`);
  const c = described.certificate;
  if (!c.identificacion) info(ctx, `warning: ${file}: the certificate names no identificación; issuer.json uses ${TEMPLATE_ISSUER_ID}: edit it`);
  return {
    base64: bytes.toString('base64'),
    pin,
    ...(c.identificacion ? { identificacion: c.identificacion } : {}),
    ...(c.tipoIdentificacion ? { tipoIdentificacion: c.tipoIdentificacion } : {}),
    subject: c.subject,
  };
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
