/**
 * `fecr demo`: the main job end to end, from nothing.
 *
 *  1. The profile: `--profile` / FECR_PROFILE when given (it must exist, unless it is "demo"), else "demo". A
 *     missing "demo" profile is created as a local profile (env local: the embedded Hacienda emulator) with its
 *     own data dir, `<data home>/fecr/demo`, so the demo never mixes its test issuer and documents into the
 *     default profile's data. A second run uses the same profile and data dir and issues the next consecutivos.
 *  2. The issuer: 3101123456 SOFTWARE TICO SOCIEDAD ANONIMA (a taxpayer the emulator's registry knows). When the
 *     profile's account does not have it yet, a test .p12 is generated (PIN 1234, written to the out dir) and the
 *     issuer registered with it.
 *  3. One document of each kind the service accepts (FE, FE with exoneración, NC referencing that FE, TE without
 *     receptor, TE for a foreign receptor, ND referencing that FE, FEC bought from a farmer, FEE to a buyer abroad,
 *     REP paying a credit sale), dated now, numbered after the issuer's last consecutivo of each kind;
 *     sent, then Hacienda's verdicts awaited.
 *  4. For each: `<clave>.xml` (the signed comprobante), `<clave>_respuesta.xml` (Hacienda's MensajeHacienda) and
 *     `<clave>.pdf` in the out dir (default ./fecr-demo). A table on stdout (JSON with --json), progress on stderr.
 *
 * Exit: 0 every document aceptado, 3 one rechazado, 1 one in error, 8 one still undecided at the timeout.
 * Works on a remote profile too (a hosted fecr whose Hacienda is its emulator).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { documentFileName } from '../../core/file-names.js';
import { platformDirs } from '../../adapters/platform-dirs.js';
import type { Ctx } from '../../cli/context.js';
import { EXIT, SilentExit, UserError, type ExitCode } from '../../cli/errors.js';
import { resolvePath, writeLine } from '../../cli/io.js';
import { info, printJson } from '../../cli/output.js';
import { renderTable } from '../../cli/table.js';
import type { Backend, DocumentStatus, FileType } from '../../client/backend.js';
import type { Profile } from '../../client/profiles.js';
import { withBackend } from '../backend.js';
import { packageUrl } from '../../core/package-root.js';
import { timeoutMs } from '../documents/shared.js';
import { demoPurchases } from '../recibidos/shared.js';

export interface DemoFlags {
  out: string;
  json?: boolean;
  timeout?: string;
}

/** The profile the demo uses unless --profile / FECR_PROFILE names one. */
export const DEMO_PROFILE = 'demo';

export const DEMO_PIN = '1234';

const ISSUER_ID = '3101123456';
const ISSUER_NAME = 'SOFTWARE TICO SOCIEDAD ANONIMA';

type Kind = 'FE' | 'ND' | 'NC' | 'TE' | 'FEC' | 'FEE' | 'REP';

/** One document of each kind the service accepts (SERVICE-SPEC "Rules by kind of document"), by fixture. */
const DEMO_DOCUMENTS: readonly { label: string; kind: Kind; fixture: string }[] = [
  { label: 'FE', kind: 'FE', fixture: '01-fe-servicios-13' },
  { label: 'FE exonerada', kind: 'FE', fixture: '06-fe-exoneracion-autorizacion' },
  { label: 'NC', kind: 'NC', fixture: '09-nc-devolucion' },
  { label: 'TE', kind: 'TE', fixture: '10-te-sin-receptor' },
  { label: 'TE extranjero', kind: 'TE', fixture: '11-te-extranjero' },
  { label: 'ND', kind: 'ND', fixture: '14-nd-ajuste-servicios' },
  { label: 'FEC', kind: 'FEC', fixture: '17-fec-agricultor' },
  { label: 'FEE', kind: 'FEE', fixture: '20-fee-cafe-usd' },
  { label: 'REP', kind: 'REP', fixture: '23-rep-credito-90-dias' },
];

const FILES: readonly { type: FileType; key: 'xml' | 'respuesta' | 'pdf'; name: (clave: string) => string }[] = [
  { type: 'XML', key: 'xml', name: (c) => documentFileName(c, 'XML') },
  { type: 'RESPUESTA', key: 'respuesta', name: (c) => documentFileName(c, 'RESPUESTA') },
  { type: 'PDF', key: 'pdf', name: (c) => documentFileName(c, 'PDF') },
];

export interface DemoRow {
  kind: string;
  clave: string;
  numeroConsecutivo: string;
  estado: DocumentStatus['estado'];
  mensaje: number | null;
  totalComprobante: string;
  moneda: string;
  /** Paths as given with --out (relative to the working directory unless --out is absolute). */
  files: Partial<Record<'xml' | 'respuesta' | 'pdf', string>>;
  /** The mail to the receptor (documents that have one): in local mode an .eml in the data dir's outbox. */
  correo?: { estado: string; destinatarios: string[]; donde: string | null };
}

export interface DemoResult {
  profile: string;
  mode: 'local' | 'remote';
  /** Local profiles: the data dir (SQLite, emulator state, master key). */
  dataDir: string | null;
  out: string;
  issuer: { identificacion: string; nombre: string; registered: boolean; p12: string | null };
  documents: DemoRow[];
  /** The buyer's side (local profiles): three supplier invoices imported and answered, and the month's summary. */
  compras?: Awaited<ReturnType<typeof demoPurchases>>;
}

/** `demo` in fecr's platform data dir (~/.local/share/fecr/demo on Linux), from the given environment. */
export function demoDataDir(env: Record<string, string | undefined>): string {
  return path.join(platformDirs(env).data, 'demo');
}

export async function run(ctx: Ctx, opts: DemoFlags, profileFlag: string | undefined): Promise<void> {
  const started = performance.now();
  const timeout = timeoutMs(opts.timeout);
  const { name, profile, dataDir } = await demoProfile(ctx, profileFlag);
  const outDir = resolvePath(ctx.io, opts.out);
  try {
    await mkdir(outDir, { recursive: true });
  } catch (e) {
    throw new UserError(`${opts.out}: cannot create (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  info(ctx, profile.mode === 'local' ? `profile "${name}": local, data dir ${dataDir}, Hacienda: the embedded emulator` : `profile "${name}": ${profile.baseUrl}`);

  const result = await withBackend(
    ctx,
    async (b): Promise<DemoResult> => {
      const issuer = await ensureIssuer(ctx, b, outDir, opts.out);
      const docs = await sendAll(ctx, b);
      const deadline = Date.now() + timeout;
      const rows: DemoRow[] = [];
      for (const d of docs) {
        const s = await b.waitForVerdict(d.clave, { timeoutMs: Math.max(0, deadline - Date.now()) });
        info(ctx, `${d.label}: ${s.estado}${s.estado === 'aceptado' || s.mensaje === null ? '' : ` (Mensaje ${s.mensaje})`}`);
        rows.push({
          kind: d.label,
          clave: s.clave,
          numeroConsecutivo: s.numeroConsecutivo,
          estado: s.estado,
          mensaje: s.mensaje,
          totalComprobante: s.totalComprobante,
          moneda: s.moneda,
          files: {},
          ...(s.correo ? { correo: { estado: s.correo.estado, destinatarios: s.correo.destinatarios, donde: s.correo.ultimaRespuesta } } : {}),
        });
      }
      await Promise.all(rows.map((row) => writeFiles(b, row, outDir, opts.out)));
      // The buyer's side: the emulator's test suppliers invoice the demo issuer, which answers each invoice.
      const compras = await demoPurchases(b, { tipo: '02', numero: issuer.identificacion, nombre: issuer.nombre }, deadline);
      for (const c of compras?.purchases ?? []) info(ctx, `purchase from ${c.proveedor}: ${c.decision}, MensajeReceptor ${c.respuesta}`);
      return { profile: name, mode: profile.mode, dataDir, out: opts.out, issuer, documents: rows, ...(compras ? { compras } : {}) };
    },
    { profile: name },
  );

  const written = result.documents.reduce((n, r) => n + Object.keys(r.files).length, 0);
  if (opts.json) printJson(ctx, result);
  else {
    writeLine(
      ctx.io.stdout,
      renderTable(
        ctx,
        ['kind', 'numeroConsecutivo', 'estado', 'clave', 'files'],
        result.documents.map((r) => [r.kind, r.numeroConsecutivo, r.estado, r.clave, FILES.filter((f) => r.files[f.key]).map((f) => f.key).join(' ')]),
      ),
    );
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  info(ctx, `wrote ${written} files to ${path.join(opts.out, path.sep)} in ${seconds} s: CLAVE.xml (signed comprobante), CLAVE_respuesta.xml (Hacienda's answer), CLAVE.pdf`);
  const mailed = result.documents.filter((r) => r.correo);
  if (mailed.length > 0) {
    const outbox = mailed.map((r) => /^outbox: (.*)$/.exec(r.correo!.donde ?? '')?.[1]).filter((f): f is string => f !== undefined);
    const where = outbox.length > 0 ? `in ${path.dirname(outbox[0]!)}${path.sep} (outbox: no SMTP server set)` : 'through the SMTP server';
    info(ctx, `mailed ${mailed.length} documents to their receptors ${where}: ${mailed.map((r) => `${r.kind} → ${r.correo!.destinatarios.join(', ')}`).join('; ')}`);
  }
  if (result.compras) {
    const t = result.compras.resumen.totales;
    info(ctx, `purchases of ${result.compras.resumen.mes}: IVA acreditable ${t.ivaAcreditable}, gasto aplicable ${t.gastoAplicable} (fecr recibidos resumen ${result.compras.resumen.mes}${name === 'default' ? '' : ` --profile ${name}`})`);
  }
  info(ctx, `see them again with: fecr documents list${name === 'default' ? '' : ` --profile ${name}`}`);
  const code = exitCode(result.documents);
  if (code !== EXIT.ok) {
    const bad = result.documents.filter((r) => r.estado !== 'aceptado').map((r) => `${r.kind} ${r.estado}`);
    info(ctx, `error: not every document was accepted: ${bad.join(', ')}`);
    throw new SilentExit(code);
  }
}

/** 3 when one was rejected, else 1 for an error, else 8 when one is still undecided; 0 when all aceptado. */
function exitCode(rows: DemoRow[]): ExitCode {
  if (rows.some((r) => r.estado === 'rechazado')) return EXIT.rejected;
  if (rows.some((r) => r.estado === 'error')) return EXIT.error;
  if (rows.some((r) => r.estado !== 'aceptado')) return EXIT.pending;
  return EXIT.ok;
}

/** The profile to use; "demo" is created (local, env local, own data dir) when nothing names another one. */
async function demoProfile(ctx: Ctx, flag: string | undefined): Promise<{ name: string; profile: Profile; dataDir: string | null }> {
  const { openProfiles, profileChoice } = await import('../../client/profiles.js');
  const chosen = flag !== undefined || Boolean(ctx.io.env.FECR_PROFILE);
  const choice = chosen ? profileChoice(ctx.io.env, flag) : { name: DEMO_PROFILE, from: '' as const };
  const { name } = choice;
  const store = await openProfiles(ctx.io.env);
  // Another name must exist (a mistyped --profile is an error, not a new profile); "demo" is created here.
  if (name !== DEMO_PROFILE) store.requireExisting(name, choice.from);
  if (name === DEMO_PROFILE && Object.keys(store.stored(name)).length === 0) {
    const dir = demoDataDir(ctx.io.env);
    await store.set(name, 'mode', 'local', ctx.io.cwd);
    await store.set(name, 'env', 'local', ctx.io.cwd);
    await store.set(name, 'dataDir', dir, ctx.io.cwd);
    info(ctx, `created profile "${name}" in ${store.file}`);
  }
  const profile = store.resolve(name);
  if (profile.mode === 'remote') return { name, profile, dataDir: null };
  if (profile.env !== 'local') {
    throw new UserError(
      `fecr demo sends test documents to the embedded Hacienda emulator; profile "${name}" uses Hacienda's ${profile.env} environment (run it without --profile, or with a local profile whose env is local)`,
    );
  }
  const { resolveDataDir } = await import('../../service/runtime.js');
  return { name, profile, dataDir: profile.dataDir ? path.resolve(ctx.io.cwd, profile.dataDir) : resolveDataDir(ctx.io.env) };
}

/** Registers the demo issuer with a fresh test .p12 unless the account already has it. */
async function ensureIssuer(ctx: Ctx, b: Backend, outDir: string, out: string): Promise<DemoResult['issuer']> {
  const base = { identificacion: ISSUER_ID, nombre: ISSUER_NAME };
  if (await b.getIssuer(ISSUER_ID)) {
    info(ctx, `issuer ${ISSUER_ID} ${ISSUER_NAME}: already registered`);
    return { ...base, registered: false, p12: null };
  }
  const { createTestP12 } = await import('../../core/sign/testcert.js');
  const p12 = createTestP12({ id: ISSUER_ID, type: '02', pin: DEMO_PIN, name: ISSUER_NAME, now: ctx.now() });
  const file = path.join(out, 'issuer.p12');
  await writeFile(path.join(outDir, 'issuer.p12'), p12, { mode: 0o600 });
  await b.registerIssuer(demoIssuer(p12.toString('base64')));
  info(ctx, `registered test issuer ${ISSUER_ID} ${ISSUER_NAME} with a generated certificate (${file}, PIN ${DEMO_PIN})`);
  return { ...base, registered: true, p12: file };
}

/** Submits the documents in order (the NC and the ND reference the first FE); returns their claves. */
async function sendAll(ctx: Ctx, b: Backend): Promise<{ label: string; clave: string }[]> {
  const { readFile } = await import('node:fs/promises');
  const { formatCr } = await import('../../core/dates.js');
  const next = await nextNumbers(b);
  const fechaEmision = formatCr(ctx.now());
  const sent: { label: string; kind: Kind; clave: string }[] = [];
  for (const d of DEMO_DOCUMENTS) {
    const body = JSON.parse(await readFile(packageUrl(`fixtures/documents/${d.fixture}.json`), 'utf8')) as Record<string, unknown>;
    body.numeroReferencia = next[d.kind]++;
    body.fechaEmision = fechaEmision;
    if (d.kind === 'NC' || d.kind === 'ND') {
      const fe = sent.find((s) => s.kind === 'FE');
      const [ref] = body.informacionReferencia as Record<string, unknown>[];
      body.informacionReferencia = [{ ...ref, tipoDocIR: '01', numero: fe?.clave, fechaEmision }];
    }
    const { clave } = await b.submit(body);
    info(ctx, `sent ${d.label} ${clave}`);
    sent.push({ label: d.label, kind: d.kind, clave });
  }
  return sent;
}

/** The next numeroReferencia of each kind for the demo issuer: one after the highest stored. */
async function nextNumbers(b: Backend): Promise<Record<Kind, number>> {
  const next: Record<Kind, number> = { FE: 1, ND: 1, NC: 1, TE: 1, FEC: 1, FEE: 1, REP: 1 };
  for (const d of await b.listDocuments({ limit: 1000 })) {
    // Clave: 506, ddmmyy, the issuer's id on 12 digits, then the consecutivo (whose last 10 digits are the number).
    if (d.clave.slice(9, 21) !== ISSUER_ID.padStart(12, '0') || !(d.kind in next)) continue;
    const n = Number(d.numeroConsecutivo.slice(10));
    if (Number.isSafeInteger(n) && n >= next[d.kind as Kind]) next[d.kind as Kind] = n + 1;
  }
  return next;
}

async function writeFiles(b: Backend, row: DemoRow, outDir: string, out: string): Promise<void> {
  await Promise.all(
    FILES.map(async (f) => {
      const bytes = await b.file(row.clave, f.type);
      if (!bytes) return;
      const name = f.name(row.clave);
      try {
        await writeFile(path.join(outDir, name), bytes);
      } catch (e) {
        throw new UserError(`${path.join(out, name)}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      row.files[f.key] = path.join(out, name);
    }),
  );
  // Keep the order xml, respuesta, pdf whatever finished first.
  row.files = Object.fromEntries(FILES.filter((f) => row.files[f.key]).map((f) => [f.key, row.files[f.key]]));
}

function demoIssuer(certificadoHacienda: string) {
  return {
    identificacion: ISSUER_ID,
    tipoIdentificacion: '02',
    codigoActividad: '6201.0',
    sucursal: 1,
    nombre: ISSUER_NAME,
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
