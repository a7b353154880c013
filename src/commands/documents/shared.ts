/** Pieces the document verbs share (send, status, download, documents): flags, clave checks, output, exit codes. */
import type { Ctx } from '../../cli/context.js';
import { EXIT, UsageError, UserError, type ExitCode } from '../../cli/errors.js';
import { writeLine } from '../../cli/io.js';
import { safeBlock, safeText } from '../../cli/safe-text.js';
import { renderTable, type TableOptions } from '../../cli/table.js';
import type { Backend, DocumentStatus, MailStatus } from '../../client/backend.js';
import type { CorrectionsApi } from '../../client/corrections.js';
import { isClave } from '../../core/clave.js';
import { errorLine, parseDetalleMensaje, type ErrorHacienda } from '../../core/xml/detalle-mensaje.js';
import { CREDENTIALS_REFUSED, FINAL_STATES } from '../../core/lifecycle.js';

export function checkClave(clave: string): string {
  const c = clave.trim();
  if (!isClave(c)) throw new UsageError(`CLAVE must be the 50 letters or digits of a clave (got "${clave}")`);
  return c;
}

/** Seconds (default 60) → ms; a usage error names the flag. */
export function timeoutMs(value: string | undefined, flag = '--timeout'): number {
  if (value === undefined) return 60_000;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a positive number of seconds`);
  return Math.round(n * 1000);
}

export const DECIDED: readonly string[] = FINAL_STATES;

/** 0 aceptado, 3 rechazado, 1 error, 4 held (Hacienda refused the issuer's credentials), 8 not decided yet. */
export function verdictExit(s: DocumentStatus): ExitCode {
  switch (s.estado) {
    case 'aceptado':
      return EXIT.ok;
    case 'rechazado':
      return EXIT.rejected;
    case 'error':
      return EXIT.error;
    case CREDENTIALS_REFUSED:
      return EXIT.auth;
    default:
      return EXIT.pending;
  }
}

export const STATUS_HEADER = ['clave', 'estado', 'kind', 'numeroConsecutivo', 'fechaEmision', 'totalComprobante', 'moneda', 'receptor', 'correo'];

export function statusRow(s: DocumentStatus): string[] {
  return [s.clave, s.estado, s.kind, s.numeroConsecutivo, s.fechaEmision, s.totalComprobante, s.moneda, s.receptorNombre ?? '', s.correo?.estado ?? ''];
}

/**
 * The mail to the receptor as one line: `correo: enviado a a@x.cr, b@y.cr (250 Ok …)`; none: null. Through the
 * sanitiser: the addresses are the body's and the answer is the mail server's.
 */
export function mailLine(m: MailStatus | null | undefined): string | null {
  if (!m) return null;
  const tries = m.estado === 'enviado' ? '' : `, ${m.intentos} ${m.intentos === 1 ? 'intento' : 'intentos'}`;
  return safeText(`correo: ${m.estado} a ${m.destinatarios.join(', ')}${m.ultimaRespuesta ? ` (${m.ultimaRespuesta}${tries})` : tries ? ` (${tries.slice(2)})` : ''}`);
}

export function printStatusTable(ctx: Ctx, rows: DocumentStatus[], opts: TableOptions = {}): void {
  writeLine(ctx.io.stdout, renderTable(ctx, STATUS_HEADER, rows.map(statusRow), opts));
}

/** A verdict's list: `errores` as the backend gives it, else (a status built without it) read from detalleMensaje. */
export function erroresOf(s: Pick<DocumentStatus, 'estado' | 'errores' | 'detalleMensaje'>): ErrorHacienda[] {
  return s.errores ?? parseDetalleMensaje(s.detalleMensaje, { aceptado: s.estado === 'aceptado' });
}

/** Hacienda's list (DocumentStatus.errores) as a table: aligned on a terminal, TSV when piped (cli/table.ts). */
export const ERRORES_HEADER = ['codigo', 'mensaje', 'fila', 'columna', 'aviso'];

export function erroresRows(errores: readonly ErrorHacienda[]): string[][] {
  return errores.map((e) => [e.codigo === null ? '' : String(e.codigo), e.mensaje, e.fila === null ? '' : String(e.fila), e.columna === null ? '' : String(e.columna), e.aviso ? 'yes' : 'no']);
}

/**
 * A verdict's list, one line per item, each through the sanitiser: `rechazado: -408 El Código …` for an error of a
 * rejected document, `aviso: -37 …` for a warning (`fila N, columna M` when the item points into the XML).
 */
export function erroresLines(s: Pick<DocumentStatus, 'estado' | 'errores' | 'detalleMensaje'>): string[] {
  return erroresOf(s).map((e) => safeText(`${e.aviso ? 'aviso' : s.estado}: ${errorLine(e)}`));
}

/** DetalleMensaje as Hacienda wrote it, line by line, without blank edges; each line through the sanitiser. */
export function printDetalle(ctx: Ctx, s: DocumentStatus): void {
  // Production's DetalleMensaje opens with a lone `.` where the sandbox has its sentence (emulator/mensaje.ts, real
  // production answers of 2026): that line says nothing, and alone it printed a bare `.` under the verdict.
  const d = s.detalleMensaje?.replace(/^\s*\.[ \t]*(?:\r?\n|$)/, '').trim();
  if (d) writeLine(ctx.io.stdout, safeBlock(d));
}

/** What a still-undecided document is waiting for, as one line; `cause`: why its last send failed (local mode). */
export function pendingLine(s: Pick<DocumentStatus, 'clave' | 'estado'>, mode: 'local' | 'remote' = 'local', cause?: string | null): string {
  if (s.estado !== 'pendiente') return `Hacienda has not decided on ${s.clave} yet (${s.estado}); check later with: fecr status ${s.clave}`;
  return mode === 'local'
    ? `${s.clave} is not sent yet (Hacienda could not be reached${cause ? `: ${cause}` : ''}); it is sent by the next fecr command that runs the worker (fecr doctor checks the profile)`
    : `${s.clave} is queued on the service and not sent to Hacienda yet; check later with: fecr status ${s.clave}`;
}

/**
 * The identificación of the issuer of a clave (positions 10–21, without the zeros in front); a MensajeReceptor's key
 * (`<clave>-<consecutivo>`) names its supplier there, not the issuer: undefined then.
 */
export function issuerOfClave(clave: string): string | undefined {
  if (!/^\d{50}$/.test(clave)) return undefined;
  return clave.slice(9, 21).replace(/^0+(?=\d)/, '');
}

/**
 * Documents held because Hacienda refused their issuer's credentials (credenciales_invalidas), as one line: the
 * issuer and the fix. `count` documents (default: this one, `clave`).
 */
export function heldLine(issuer: string | undefined, what: { clave: string } | { count: number }): string {
  const who = issuer ? `issuer ${issuer}` : 'the issuer';
  const held = 'clave' in what ? `${what.clave} is held, not sent` : `${what.count} document${what.count === 1 ? ' is' : 's are'} held, not sent`;
  return `Hacienda refused the usuarioHacienda/claveHacienda of ${who}: ${held} (credenciales_invalidas), and nothing more is tried until they change; fix them with: fecr emisor update ISSUER.json (the held documents are sent then)`;
}

/** The backend's annul / replace / payment verbs (issue 30), or a one-line refusal. */
export function correctionsOf(b: Backend): CorrectionsApi {
  if (!b.corrections) throw new UserError('this backend cannot annul, replace or record payments (fecr documents annul|replace|payment)');
  return b.corrections();
}
