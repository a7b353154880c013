/**
 * Contingency (issue 30), the pure part: what a provisional (paper) comprobante recorded during an outage holds, the
 * InformacionReferencia of the electronic document that replaces it, and how far a debt is from its deadline.
 *
 * Sources:
 *  - the clave's situación (its 42nd character, core/clave.ts): 1 Normal; 2 Contingencia, "comprobantes electrónicos
 *    que sustituyen al comprobante físico emitido por contingencia"; 3 Sin internet, "generados y expresados en
 *    formato electrónico … pero que no se cuenta con el respectivo acceso a internet" [ANEXOS v4.4 p.67, NOTES §2.2];
 *  - only situación 3 may carry a FechaEmision earlier than the reception [ANEXOS p.19];
 *  - the replacing document references the provisional one in InformacionReferencia [ANEXOS p.56 d), "Factura
 *    electrónica por contingencia, sustituyendo un comprobante provisional"], with Codigo 05 "Sustituye comprobante
 *    provisional por contingencia" (Nota 9, ANEXOS p.72; CodigoReferenciaType of the 2026 XSDs) and TipoDocIR 08
 *    "Comprobante emitido en contingencia" (Nota 10, ANEXOS p.73; TipoDocReferenciaType of the 2026 XSDs);
 *  - the term to send them: no number found in Decreto 44739-H as we could read it. The repealed resolution
 *    DGT-R-48-2016, art. 15, gave "un plazo máximo de dos días a partir de que los sistemas estén habilitados": that
 *    is the default (48 hours), a setting, and said to be unsourced for the decree in force (README).
 */
import { z } from 'zod';
import { formatCr, parseIsoDateTime } from './dates.js';
import { findingsFromZod } from './input/findings.js';
import { KIND_OF_TIPO_DOC, TIPO_DOC_OF_KIND } from './lifecycle.js';
import type { DocumentKind, Finding } from './model.js';
import { dec, isDecimalString, money } from './money.js';

export type Situacion = '1' | '2' | '3';

/** ANEXOS p.67: the clave's situación digit, in words. */
export const SITUACIONES: Readonly<Record<Situacion, string>> = { '1': 'normal', '2': 'contingencia', '3': 'sin internet' };

/** The situación of a document that replaces a provisional (paper) comprobante (ANEXOS p.67: "Contingencia"). */
export const SITUACION_CONTINGENCIA: Situacion = '2';

/** Nota 9 code 05 and Nota 10 code 08 (ANEXOS p.72-73, 2026 XSDs). */
export const CODIGO_SUSTITUYE_PROVISIONAL = '05';
export const TIPO_DOC_IR_CONTINGENCIA = '08';

/** Default hours to send what is owed (DGT-R-48-2016 art. 15, repealed: not sourced for Decreto 44739-H). */
export const PLAZO_HORAS_DEFAULT = 48;

/** Kinds a provisional comprobante may stand for (the comprobantes an issuer hands to a buyer). */
const PROVISIONAL_KINDS: readonly DocumentKind[] = ['FE', 'TE', 'NC', 'ND', 'FEE', 'FEC'];

export const ProvisionalInput = z.strictObject({
  numero: z.string().trim().min(1, 'is required').max(50, 'must be at most 50 characters (InformacionReferencia Numero)'),
  fechaEmision: z.string().trim(),
  emisor: z.union([z.string(), z.number()]).transform((v) => String(v).trim()),
  receptor: z.string().trim().max(160).optional(),
  totalComprobante: z.union([z.string(), z.number()]).transform((v) => String(v).trim()),
  codigoMoneda: z.string().trim().length(3, 'must be a 3-letter currency code').optional(),
  kind: z.union([z.string(), z.number()]).transform((v) => String(v).trim()).optional(),
});

/** A provisional comprobante as stored (the input checked and normalised). */
export interface Provisional {
  numero: string;
  /** ISO 8601 date-time in Costa Rica time (a bare date given is its midnight there). */
  fechaEmision: string;
  emisor: string;
  receptor: string | null;
  totalComprobante: string;
  codigoMoneda: string;
  kind: DocumentKind;
}

/** Checks one provisional record (`fecr contingency record`): findings at its paths, or the record. */
export function parseProvisional(input: unknown, path = ''): { ok: true; value: Provisional } | { ok: false; findings: Finding[] } {
  const at = (p: string) => (path ? `${path}.${p}` : p);
  const r = ProvisionalInput.safeParse(input);
  if (!r.success) return { ok: false, findings: findingsFromZod(r.error).map((f) => ({ ...f, path: f.path ? at(f.path) : path })) };
  const v = r.data;
  const findings: Finding[] = [];
  const fecha = parseIsoDateTime(v.fechaEmision);
  if (!fecha) findings.push({ path: at('fechaEmision'), message: 'must be an ISO 8601 date or date-time, e.g. "2026-10-14T09:30:00-06:00"' });
  if (!/^[A-Za-z0-9]{1,12}$/.test(v.emisor)) findings.push({ path: at('emisor'), message: "must be the issuer's identificación" });
  if (!isDecimalString(v.totalComprobante) || dec(v.totalComprobante).lt(0)) findings.push({ path: at('totalComprobante'), message: 'must be a decimal amount, e.g. "11300.00"' });
  const given = v.kind;
  const kind = given === undefined ? 'FE' : (KIND_OF_TIPO_DOC[given] ?? (PROVISIONAL_KINDS as readonly string[]).find((k) => k === given.toUpperCase()));
  if (!kind || !PROVISIONAL_KINDS.includes(kind as DocumentKind)) findings.push({ path: at('kind'), message: `must be one of ${PROVISIONAL_KINDS.join(', ')} (or its tipoDoc)` });
  if (findings.length) return { ok: false, findings };
  return {
    ok: true,
    value: {
      numero: v.numero,
      fechaEmision: formatCr(fecha!),
      emisor: v.emisor,
      receptor: v.receptor && v.receptor !== '' ? v.receptor : null,
      totalComprobante: money(dec(v.totalComprobante)),
      codigoMoneda: (v.codigoMoneda ?? 'CRC').toUpperCase(),
      kind: kind as DocumentKind,
    },
  };
}

/** The InformacionReferencia (body shape) of a document that replaces a provisional one: Codigo 05, TipoDocIR 08. */
export function provisionalReference(p: Pick<Provisional, 'numero' | 'fechaEmision'>): Record<string, string> {
  return {
    tipoDocIR: TIPO_DOC_IR_CONTINGENCIA,
    numero: p.numero,
    fechaEmision: p.fechaEmision,
    codigo: CODIGO_SUSTITUYE_PROVISIONAL,
    razon: 'Sustituye comprobante provisional por contingencia',
  };
}

/**
 * The body that replaces a provisional comprobante: situación 2 (ANEXOS p.67) and the reference to it added to its own
 * references (an NC keeps the one to the comprobante it corrects); emisor and tipoDoc the provisional's when left out. Findings when the body cannot be one: another
 * issuer or kind than the provisional's, a situación other than 2, or ten references already (the XSDs' maximum).
 */
export function replacementBody(body: unknown, p: Provisional): { ok: true; body: Record<string, unknown> } | { ok: false; findings: Finding[] } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, findings: [{ path: '', message: 'must be a document body (a JSON object)' }] };
  const b = body as Record<string, unknown>;
  const findings: Finding[] = [];
  if (b.emisor !== undefined && String(b.emisor).trim() !== p.emisor) findings.push({ path: 'emisor', message: `must be the provisional comprobante's issuer (${p.emisor})` });
  const kind = b.tipoDoc === undefined ? undefined : KIND_OF_TIPO_DOC[String(b.tipoDoc).trim()];
  if (kind !== undefined && kind !== p.kind) findings.push({ path: 'tipoDoc', message: `must be the provisional comprobante's kind (${p.kind})` });
  if (b.situacion !== undefined && String(b.situacion) !== '2') findings.push({ path: 'situacion', message: 'must be "2" (contingencia) or left out: the document replaces a provisional comprobante (ANEXOS p.67)' });
  const refs = Array.isArray(b.informacionReferencia) ? (b.informacionReferencia as unknown[]) : b.informacionReferencia === undefined ? [] : null;
  if (refs === null) findings.push({ path: 'informacionReferencia', message: 'must be a list' });
  else if (refs.length >= 10) findings.push({ path: 'informacionReferencia', message: 'has 10 references already (the most the XSDs allow): no room for the provisional one' });
  if (findings.length || refs === null) return { ok: false, findings };
  return { ok: true, body: { ...b, emisor: b.emisor ?? p.emisor, tipoDoc: b.tipoDoc ?? TIPO_DOC_OF_KIND[p.kind], situacion: '2', informacionReferencia: [...refs, provisionalReference(p)] } };
}

export type Urgency = 'ok' | 'near' | 'passed';

/**
 * How a debt stands against its term: `passed` after `plazoHoras` from `since`, `near` in the last quarter of it
 * (a warning to act on), else `ok`. Hours left are negative once passed.
 */
export function urgencyOf(sinceMs: number, nowMs: number, plazoHoras: number): { urgency: Urgency; horasRestantes: number } {
  const left = (sinceMs + plazoHoras * 3_600_000 - nowMs) / 3_600_000;
  const horasRestantes = Math.round(left * 10) / 10;
  if (left <= 0) return { urgency: 'passed', horasRestantes };
  return { urgency: left <= plazoHoras / 4 ? 'near' : 'ok', horasRestantes };
}

/** How long something has been owed, in words: `4 min`, `3 h 20 min`, `2 d 5 h` (a clock behind: `0 min`). */
export function ageText(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `${Math.floor(hours / 24)} d${hours % 24 ? ` ${hours % 24} h` : ''}`;
}
