/**
 * `fecr emisor register|update` without FILE.json, in a terminal: asks for the issuer record through the CLI's
 * prompts (src/cli/prompt.ts: on stderr, so stdout stays for --json), prefilled from what is known:
 *
 *  - the identificación first: `register` stops at once when it is already registered in this profile (`update`
 *    when it is not);
 *  - Hacienda's taxpayer registry (the backend's contribuyente lookup): legal and trade name, and the taxpayer's own
 *    active economic activities to choose codigoActividad from;
 *  - the certificate (--p12 or asked), opened with its PIN (hidden) right away: a wrong PIN is asked again; a
 *    certificate of another identificación is a warning;
 *  - provincia, cantón and distrito chosen by name (searchable) from Hacienda's codification;
 *  - for update, the issuer as the service shows it (trade name, e-mail, phone, ambiente).
 *
 * Secrets (PIN, Hacienda password) are typed hidden and never echoed; the summary shown before the confirmation
 * leaves them out. Only called when stdin is a terminal (the caller checks).
 */
import { actividadFromInput } from '../../core/catalog/actividades.js';
import { actividadItems } from '../../core/rules/registry-rules.js';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { certificateFailure } from '../../cli/certificate.js';
import type { Ctx } from '../../cli/context.js';
import { EXIT, UserError } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { safeText } from '../../cli/safe-text.js';
import { Cancelled, confirm, input, password, searchSelect, select } from '../../cli/prompt.js';
import { cantonesOf, distritosOf, provincias, ubicacionNames, type Place } from '../../core/catalog/ubicacion.js';
import type { Backend, IssuerSummary, TaxpayerSummary } from '../../client/backend.js';

const TIPOS = [
  { value: '01', name: '01 física (cédula de persona física)' },
  { value: '02', name: '02 jurídica (cédula jurídica)' },
  { value: '03', name: '03 DIMEX' },
  { value: '04', name: '04 NITE' },
];
const OTHER = '__other__';

const required = (what: string) => (v: string) => (v.trim() !== '' ? true : `${what} is required`);

export interface InteractiveOptions {
  p12?: string;
}

/** Asks for the record; returns it ready for the backend (claveHacienda base64, certificadoHacienda base64). */
export async function askIssuerRecord(ctx: Ctx, backend: Backend, verb: 'register' | 'update', opts: InteractiveOptions): Promise<Record<string, unknown>> {
  const { describeP12 } = await import('../../core/sign/p12.js');
  // Its lines quote the certificate, Hacienda's registry and file names: through the sanitiser.
  const say = (line: string) => writeLine(ctx.io.stderr, safeText(line));
  try {
    say(verb === 'register' ? 'Register an issuer (emisor). Ctrl-C cancels; nothing is sent before the confirmation.' : 'Update an issuer (emisor). Ctrl-C cancels.');

    // 1. Who, first: an identificación already registered in this profile stops `register` here (and an unknown
    // one stops `update`), before any other question. Then Hacienda's registry (the backend's contribuyente lookup:
    // the emulator's registry in local mode, /fe/ae otherwise) prefills the names and offers the activities; a
    // taxpayer it does not know is said and the fields are asked by hand (the lookup is a help, not the judge).
    const identificacion = (
      await input(ctx, {
        message: 'Identificación (digits only):',
        validate: (v) => (/^\d{9,12}$/.test(v.trim()) ? true : 'must be 9 to 12 digits'),
      })
    ).trim();
    const current: IssuerSummary | null = await backend.getIssuer(identificacion);
    if (verb === 'register' && current) throw new UserError(`issuer ${identificacion} is already registered in this profile (fecr emisor update ${identificacion} changes it)`);
    if (verb === 'update' && !current) throw new UserError(`no issuer ${identificacion} is registered (use fecr emisor register)`);
    let taxpayer: TaxpayerSummary | null = null;
    try {
      taxpayer = await backend.taxpayer(identificacion, { actividades: true });
    } catch (e) {
      say(`the taxpayer lookup failed (${(e as Error).message}); fill the fields in by hand`);
    }
    if (taxpayer) say(`Hacienda's registry: ${taxpayer.nombre} (tipo ${taxpayer.tipoIdentificacion})`);
    else say(`${identificacion} is not in Hacienda's registry of taxpayers; fill the fields in by hand`);

    // 2. The certificate and its PIN: opened now, so a wrong PIN is asked again instead of failing at the end.
    let p12File = opts.p12;
    let p12: Buffer | undefined;
    for (;;) {
      p12File ??= await input(ctx, { message: 'Certificate (.p12 file from the BCCR / Hacienda):', validate: required('the .p12 file') });
      try {
        p12 = await readFile(path.resolve(ctx.io.cwd, p12File.trim()));
        break;
      } catch (e) {
        say(`cannot read ${p12File} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
        if (opts.p12 !== undefined && p12File === opts.p12) throw new UserError(`${opts.p12}: cannot read the certificate`);
        p12File = undefined;
      }
    }
    const now = ctx.now();
    let described: ReturnType<typeof describeP12> | undefined;
    const pin = await password(ctx, {
      message: 'PIN of the certificate:',
      mask: true,
      validate: (v) => {
        if (v === '') return 'the PIN is required';
        try {
          described = describeP12(p12, v, now);
          return true;
        } catch (e) {
          const why = certificateFailure(e) ?? `the certificate cannot be opened: ${(e as Error).message}`;
          return (e as { code?: string }).code === 'WRONG_PIN' ? `${why}, try again` : why;
        }
      },
    });
    const cert = described!.certificate;
    say(`certificate: ${cert.subject} (valid until ${cert.notAfter.toISOString().slice(0, 10)}${described!.validity === 'valid' ? '' : `, ${described!.validity}`})`);
    if (cert.identificacion && cert.identificacion !== identificacion) say(`warning: this certificate belongs to ${cert.identificacion}, not to ${identificacion}`);

    const tipoDefault = (current ? String(current.tipoIdentificacion).padStart(2, '0') : undefined) ?? taxpayer?.tipoIdentificacion ?? cert.tipoIdentificacion;
    const tipoIdentificacion = await select(ctx, { message: 'Identification type:', choices: TIPOS, ...(tipoDefault ? { default: tipoDefault } : {}) });
    const nombre = await input(ctx, { message: 'Legal name (razón social):', ...(taxpayer ? { default: taxpayer.nombre } : {}), validate: required('the name') });
    const nombreComercial = await input(ctx, { message: 'Trade name (nombre comercial):', default: current?.nombreComercial ?? taxpayer?.nombre ?? nombre, validate: required('the trade name') });

    // 3. Activity: one of the taxpayer's own active ones (its list in the registry), or typed.
    const actividades = taxpayer?.actividades ?? [];
    let codigoActividad: string = OTHER;
    if (actividades.length > 0) {
      codigoActividad = await select(ctx, {
        message: 'Economic activity (codigoActividad):',
        choices: [
          ...actividades.map((a) => {
            const codigo = actividadFromInput(a.codigo);
            const antes = a.ciiu3?.length ? `  (before TRIBU-CR: ${a.ciiu3.join(', ')})` : '';
            return { value: codigo, name: `${codigo}  ${a.descripcion}${antes}` };
          }),
          { value: OTHER, name: 'another code…' },
        ],
      });
    }
    if (codigoActividad === OTHER) {
      codigoActividad = await input(ctx, {
        message: 'Economic activity code, as Hacienda writes it (CIIU-4, e.g. 6201.0):',
        validate: (v) => {
          const code = actividadFromInput(v);
          if (code.length !== 6) return 'must be a CIIU-4 code such as 6201.0 (or a six-digit code of the former catalogue)';
          const refused = actividadItems(code).find((i) => !i.aviso);
          return refused ? `${refused.codigo} ${refused.mensaje}` : true;
        },
      });
      codigoActividad = actividadFromInput(codigoActividad);
    }
    const sucursal = await input(ctx, { message: 'Branch (sucursal; 1 = headquarters):', default: '1', validate: (v) => (/^\d{1,3}$/.test(v.trim()) && Number(v) >= 1 ? true : 'must be 1 to 999') });

    // 4. Contact and location.
    const telefono = await input(ctx, { message: 'Phone:', ...(current ? { default: current.telefono } : {}), validate: (v) => (v.trim().length >= 8 ? true : 'must be a phone number') });
    const correoElectronico = await input(ctx, { message: 'E-mail:', ...(current ? { default: current.correoElectronico } : {}), validate: (v) => (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.trim()) ? true : 'must be an e-mail address') });
    // Provincia, cantón and distrito by name, from Hacienda's codification (type part of a name to narrow the list).
    const place = (p: Place) => ({ value: p.code, name: `${p.name} (${p.code})` });
    const provincia = await searchSelect(ctx, { message: 'Province (provincia):', choices: provincias().map(place) });
    const canton = await searchSelect(ctx, { message: 'Canton (cantón):', choices: cantonesOf(provincia).map(place) });
    const distrito = await searchSelect(ctx, { message: 'District (distrito):', choices: distritosOf(provincia, canton).map(place) });
    const barrio = (await input(ctx, { message: 'Neighbourhood (barrio, optional):' })).trim();
    const direccion = await input(ctx, { message: 'Address (otras señas):', validate: (v) => (v.trim().length >= 5 ? true : 'at least 5 characters') });

    // 5. Hacienda's system.
    const ambiente = await select(ctx, {
      message: 'Environment (ambiente):',
      choices: [
        { value: 2, name: '2 testing (sandbox)' },
        { value: 1, name: '1 production' },
      ],
      default: current?.ambiente === 1 ? 1 : 2,
    });
    const usuarioHacienda = await input(ctx, { message: "User of Hacienda's comprobantes system (usuarioHacienda):", validate: required('the user') });
    const claveHacienda = await password(ctx, { message: 'Password of that user:', mask: true, validate: required('the password') });

    const record: Record<string, unknown> = {
      identificacion,
      tipoIdentificacion,
      codigoActividad: codigoActividad.trim(),
      sucursal: Number(sucursal),
      nombre: nombre.trim(),
      nombreComercial: nombreComercial.trim(),
      telefono: telefono.trim(),
      correoElectronico: correoElectronico.trim(),
      ubicacion: { provincia, canton, distrito, ...(barrio ? { barrio } : {}), direccion: direccion.trim() },
      ambiente,
      usuarioHacienda: usuarioHacienda.trim(),
      claveHacienda: Buffer.from(claveHacienda, 'utf8').toString('base64'),
      pinCertificado: pin,
      certificadoHacienda: p12.toString('base64'),
    };

    // 6. Summary (no secrets) and confirmation.
    say('');
    for (const [k, v] of summary(record, p12File)) say(`  ${k.padEnd(20)} ${v}`);
    say('');
    const ok = await confirm(ctx, { message: verb === 'register' ? 'Register this issuer?' : 'Update this issuer?', default: true });
    if (!ok) throw new UserError(`cancelled: nothing was ${verb === 'register' ? 'registered' : 'updated'}`);
    return record;
  } catch (e) {
    if (e instanceof Cancelled) throw new UserError(`cancelled: nothing was ${verb === 'register' ? 'registered' : 'updated'}`, EXIT.interrupted);
    throw e;
  }
}

/** `Mata Redonda, San José, San José (1-01-08)`: the names of the codification, then the codes. */
function ubicacionLabel(u: Record<string, string>): string {
  const n = ubicacionNames(u.provincia!, u.canton!, u.distrito!);
  return `${[n.distrito ?? u.distrito, n.canton ?? u.canton, n.provincia ?? u.provincia].join(', ')} (${u.provincia}-${u.canton}-${u.distrito})`;
}

/** The record for people: secrets as "(hidden)", the certificate by its file. */
function summary(r: Record<string, unknown>, p12File: string): [string, string][] {
  const u = r.ubicacion as Record<string, string>;
  return [
    ['identificacion', `${String(r.identificacion)} (tipo ${String(r.tipoIdentificacion)})`],
    ['nombre', String(r.nombre)],
    ['nombreComercial', String(r.nombreComercial)],
    ['codigoActividad', String(r.codigoActividad)],
    ['sucursal', String(r.sucursal)],
    ['telefono', String(r.telefono)],
    ['correoElectronico', String(r.correoElectronico)],
    ['ubicacion', `${ubicacionLabel(u)}${u.barrio ? `, ${u.barrio}` : ''}, ${u.direccion}`],
    ['ambiente', r.ambiente === 1 ? '1 production' : '2 testing (sandbox)'],
    ['usuarioHacienda', String(r.usuarioHacienda)],
    ['claveHacienda', '(hidden)'],
    ['certificadoHacienda', p12File],
    ['pinCertificado', '(hidden)'],
  ];
}
