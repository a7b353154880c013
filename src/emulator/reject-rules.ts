/**
 * Rejections forced by predicate (the fault file's `reject` rules): a received comprobante whose numeroReferencia,
 * emisor, kind or a line's Detalle match a rule is rejected with the rule's code and text, whatever its content.
 * Nobody knows a clave before fecr makes it, so a CI rehearsal names the document by what its body says. Every
 * predicate a rule gives must hold; a rule with none is refused. Without `codigo` the rejection is Hacienda's -54
 * (a rejection its real answers show); without `mensaje`, Hacienda's text for the code where one is known
 * (core/rules/hacienda-codes.ts), else a sentence naming the rule.
 */
import { z } from 'zod';
import { parseClave } from '../core/clave.js';
import { KIND_OF_TIPO_DOC } from '../core/lifecycle.js';
import { TIPO_COMPROBANTE, type DocumentKind } from '../core/model.js';
import { strictObject } from '../core/input/unknown-keys.js';
import { CODIGOS, TEXTOS } from '../core/rules/hacienda-codes.js';
import type { ValidationErrorItem } from './store.js';

const KIND_NAMES = Object.keys(TIPO_COMPROBANTE) as DocumentKind[];

/** The code of a rejection without `codigo`: Hacienda's -54, a rejection of its real answers (NOTES §6.3). */
export const DEFAULT_REJECT_CODIGO = CODIGOS.TOTAL_IMPUESTO;

/** Hacienda's text of each code a rule may name without a `mensaje` (line-level texts name line 1). */
const TEXT_OF_CODE: Readonly<Record<number, string>> = {
  [CODIGOS.CLAVE_IDENTIFICACION]: TEXTOS.clave8,
  [CODIGOS.CLAVE_CONSECUTIVO]: TEXTOS.clave23,
  [CODIGOS.UBICACION]: TEXTOS.ubicacion37,
  [CODIGOS.TARIFA_OBLIGATORIA]: TEXTOS.tarifa45('1'),
  [CODIGOS.TOTAL_LINEA]: TEXTOS.linea46('1'),
  [CODIGOS.TOTAL_DESCUENTOS]: TEXTOS.descuentos52,
  [CODIGOS.FECHA_EMISION]: TEXTOS.fechaDia53,
  [CODIGOS.TOTAL_IMPUESTO]: TEXTOS.impuesto54,
  [CODIGOS.PLAZO_CREDITO]: TEXTOS.plazo58,
  [CODIGOS.FIRMANTE]: TEXTOS.firmante60,
  [CODIGOS.CABYS]: TEXTOS.cabys400('1'),
  [CODIGOS.CLAVE_FECHA]: TEXTOS.clave405,
  [CODIGOS.ACTIVIDAD_NO_REGISTRADA]: TEXTOS.actividad407,
  [CODIGOS.ACTIVIDAD_INVALIDA]: TEXTOS.actividad408,
  [CODIGOS.DESGLOSE_IMPUESTO]: TEXTOS.desglose487,
  [CODIGOS.MEDIO_PAGO_OTROS]: TEXTOS.medioPago492,
  [CODIGOS.TARIFA_EXENTO]: TEXTOS.tarifa505('1'),
};

const CODIGO_MESSAGE = 'must be a negative code such as "-54"';
const codigo = z
  .union([z.string().trim().regex(/^-[1-9]\d{0,4}$/, CODIGO_MESSAGE), z.number().int(CODIGO_MESSAGE).min(-99_999, CODIGO_MESSAGE).max(-1, CODIGO_MESSAGE)], { error: CODIGO_MESSAGE })
  .transform(Number)
  .meta({ description: 'The code the rejection lists, e.g. "-54" (default -54).', examples: ['-54', -99] });

const KIND_MESSAGE = `must be a kind (${KIND_NAMES.join(', ')}) or a tipoDoc (1, 2, 3, 4, 8, 9, 10)`;
const kindOf = (k: string | number): DocumentKind => ((KIND_NAMES as string[]).includes(String(k)) ? (k as DocumentKind) : KIND_OF_TIPO_DOC[String(k)]!);
const kind = z
  .union([
    z.enum([...KIND_NAMES, ...Object.keys(KIND_OF_TIPO_DOC).sort((a, b) => Number(a) - Number(b) || a.length - b.length)] as [string, ...string[]], { error: KIND_MESSAGE }),
    z.literal([1, 2, 3, 4, 8, 9, 10], { error: KIND_MESSAGE }),
  ], { error: KIND_MESSAGE })
  .transform(kindOf)
  .meta({ description: 'The kind of comprobante: FE, ND, NC, TE, FEC, FEE, REP, or the body\'s tipoDoc ("1", "4", …).', examples: ['FE', '4'] });

export const rejectRuleSchema = strictObject({
  numeroReferencia: z.number().int().min(1).max(9_999_999_999).optional().meta({ description: "The body's numeroReferencia: the last 10 digits of the consecutivo." }),
  emisor: z
    .string()
    .trim()
    .regex(/^\d{9,12}$/, 'must be an identificación of 9 to 12 digits')
    .transform((s) => s.replace(/^0+/, ''))
    .optional()
    .meta({ description: "The issuer's identificación (the body's emisor: the one in the clave)." }),
  kind: kind.optional(),
  detalleContains: z.string().min(1, 'must not be empty').max(200).optional().meta({ description: "A text one line's Detalle contains (letter case ignored)." }),
  clave: z
    .string()
    .trim()
    .regex(/^\d{50}$/, 'must be a clave of 50 digits')
    .optional()
    .meta({ description: 'The clave itself (what --reject CLAVE does).' }),
  codigo: codigo.optional(),
  mensaje: z.string().trim().min(1, 'must not be empty').max(1000).optional().meta({ description: "The rejection's text (default: Hacienda's text for the code)." }),
  aviso: z.boolean().optional().meta({ description: 'true: list the code as a warning and leave the document accepted.' }),
})
  .refine((r) => r.numeroReferencia !== undefined || r.emisor !== undefined || r.kind !== undefined || r.detalleContains !== undefined || r.clave !== undefined, {
    message: 'needs at least one of numeroReferencia, emisor, kind, detalleContains, clave',
  })
  .meta({ description: 'A rejection rule: every predicate given must hold.' });

export type RejectRule = z.output<typeof rejectRuleSchema>;

/** What the rules look at of a received comprobante. */
export interface RuleSubject {
  clave: string;
  /** The lines' Detalle (absent when the XML could not be read). */
  detalles?: readonly string[];
}

function matches(rule: RejectRule, s: RuleSubject): boolean {
  const parts = parseClave(s.clave);
  if (rule.clave !== undefined && rule.clave !== s.clave) return false;
  if (rule.numeroReferencia !== undefined && Number(parts?.consecutivo.slice(10) ?? NaN) !== rule.numeroReferencia) return false;
  if (rule.emisor !== undefined && parts?.identificacion !== rule.emisor) return false;
  if (rule.kind !== undefined && parts?.consecutivo.slice(8, 10) !== TIPO_COMPROBANTE[rule.kind]) return false;
  if (rule.detalleContains !== undefined) {
    const needle = rule.detalleContains.toLocaleLowerCase('es');
    if (!s.detalles?.some((d) => d.toLocaleLowerCase('es').includes(needle))) return false;
  }
  return true;
}

/** The items the matching rules add to a comprobante's answer, in rule order (one per rule). */
export function forcedItems(rules: readonly RejectRule[], s: RuleSubject): ValidationErrorItem[] {
  const out: ValidationErrorItem[] = [];
  rules.forEach((rule, i) => {
    if (!matches(rule, s)) return;
    const c = rule.codigo ?? DEFAULT_REJECT_CODIGO;
    const mensaje = rule.mensaje ?? TEXT_OF_CODE[c] ?? `Rechazo forzado por la regla ${i + 1} del archivo de fallas del emulador.`;
    out.push({ codigo: c, mensaje, fila: 0, columna: 0, ...(rule.aviso ? { aviso: true } : {}) });
  });
  return out;
}
