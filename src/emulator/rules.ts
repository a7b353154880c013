/**
 * Every rule the emulator answers with, and its evidence: one table, from which the README's list is made
 * (`rulesMarkdown`, checked by test/emulator-rules-table.test.ts; regenerate with `npx tsx scripts/rules-table.ts`).
 * A rule with Hacienda's code has a source (a real answer of NOTES §6.3, the XSDs, an ANEXOS note); a rule no real
 * answer shows answers with an emulator code (-9xxx) and says so. `validate` says what `fecr validate` (and `fecr batch
 * --dry-run`) reports of it before sending: the same code (core/rules), or fecr's own finding on the body (fecr builds
 * the XML's figures itself, so its input rules refuse what the emulator would), or nothing (it needs Hacienda's state).
 */
import { CODIGOS } from '../core/rules/hacienda-codes.js';

export type Verdict = 'rechazo' | 'aviso' | 'rechazo (día posterior) / aviso (misma fecha)';

export interface EmulatorRule {
  /** Hacienda's code, an emulator code (≤ -9000), or null for Hacienda's plain sentences without a code. */
  codigo: number | null;
  verdict: Verdict;
  /** What triggers it. */
  condition: string;
  /** The evidence; `none` for the emulator's own codes. */
  source: string;
  /** What `fecr validate` reports of it. */
  validate: 'same code' | 'fecr finding' | 'no' | 'note';
}

const REAL = 'real sandbox answer, NOTES §6.3';

export const RULES: readonly EmulatorRule[] = [
  { codigo: CODIGOS.ESQUEMA, verdict: 'rechazo', condition: 'the official XSD (April 2026) fails: only the first error, in the words and at the fila/columna of Java\'s validator (Xerces)', source: `${REAL}; xsd/2026/v4.4`, validate: 'same code' },
  { codigo: null, verdict: 'rechazo', condition: 'an XMLDSig signature without XAdES properties ("La firma del documento no es XAdES, se obtuvo [ERROR]"), reported before and instead of the schema', source: REAL, validate: 'no' },
  { codigo: null, verdict: 'rechazo', condition: 'a XAdES signature without a policy identifier ("La firma del documento no tiene el Policy Id"), also before and instead of the schema (as the XMLDSig case); an older policy (v4.2) is accepted', source: 'third-party test quoting Hacienda (not traced), NOTES §3.3/§6.3; its place before the schema extrapolated', validate: 'no' },
  { codigo: null, verdict: 'rechazo', condition: 'a signature value or digest that does not verify, or a certificate not valid at signing time ("La firma del comprobante electrónico no es válida (…)")', source: REAL, validate: 'no' },
  { codigo: CODIGOS.CLAVE_IDENTIFICACION, verdict: 'rechazo', condition: "the clave's identification ≠ the Emisor's", source: REAL, validate: 'no' },
  { codigo: CODIGOS.CLAVE_CONSECUTIVO, verdict: 'rechazo', condition: "the clave's consecutivo ≠ NumeroConsecutivo", source: REAL, validate: 'no' },
  { codigo: CODIGOS.UBICACION, verdict: 'aviso', condition: "the Emisor's provincia/cantón/distrito ≠ the registered ones (learnt from its first accepted document)", source: `${REAL}; real production answers 2026`, validate: 'no' },
  { codigo: CODIGOS.TARIFA_OBLIGATORIA, verdict: 'rechazo', condition: 'an IVA (código 01) without Tarifa', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.TOTAL_LINEA, verdict: 'rechazo', condition: 'MontoTotalLinea ≠ SubTotal + ImpuestoNeto (+ the line\'s other figures), compared exactly', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.TOTAL_DESCUENTOS, verdict: 'rechazo', condition: 'TotalDescuentos ≠ Σ MontoDescuento, compared exactly', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.FECHA_EMISION, verdict: 'rechazo (día posterior) / aviso (misma fecha)', condition: 'FechaEmision later than the reception: on a later day in Costa Rica, or later the same day (more than 10 minutes)', source: REAL, validate: 'same code' },
  { codigo: CODIGOS.TOTAL_IMPUESTO, verdict: 'rechazo', condition: 'TotalImpuesto ≠ Σ Monto, compared exactly', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.PLAZO_CREDITO, verdict: 'rechazo', condition: 'CondicionVenta 02 (or 10) without PlazoCredito', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.FIRMANTE, verdict: 'rechazo', condition: 'the signing certificate is not the Emisor\'s (the Receptor\'s in an FEC)', source: REAL, validate: 'no' },
  { codigo: CODIGOS.CONSECUTIVO_REPETIDO, verdict: 'rechazo', condition: 'a consecutivo used before by the same issuer and kind, whatever the clave', source: REAL, validate: 'no' },
  { codigo: CODIGOS.CABYS, verdict: 'rechazo', condition: 'a line\'s CABYS code not in the catalogue fecr ships (fixtures/cabys.json.gz)', source: REAL, validate: 'same code' },
  { codigo: CODIGOS.CLAVE_FECHA, verdict: 'rechazo', condition: "the clave's date ≠ FechaEmision's day in Costa Rica", source: REAL, validate: 'no' },
  { codigo: CODIGOS.ACTIVIDAD_NO_REGISTRADA, verdict: 'aviso', condition: "CodigoActividadEmisor is not among the taxpayer's registered activities (by code, old code or CIIU-4 successor)", source: REAL, validate: 'no' },
  { codigo: CODIGOS.ACTIVIDAD_INVALIDA, verdict: 'rechazo', condition: 'CodigoActividadEmisor neither CIIU-4 (NNNN.N) nor a code of the former six-digit catalogue (620100, 462000, 046200, 007410)', source: `${REAL}; actividades/SOURCES.md`, validate: 'same code' },
  { codigo: CODIGOS.DESGLOSE_IMPUESTO, verdict: 'rechazo', condition: 'a tax amount (a line Impuesto with Monto ≠ 0) without TotalDesgloseImpuesto; lines all exempt with Monto 0 need none', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.MEDIO_PAGO_OTROS, verdict: 'rechazo', condition: 'MedioPago 99 without MedioPagoOtros', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.TARIFA_EXENTO, verdict: 'rechazo', condition: 'CodigoTarifaIVA 10 (exento) with a Tarifa other than 0, or without Tarifa (then also -45)', source: REAL, validate: 'fecr finding' },
  { codigo: CODIGOS.CLAVE_ENVIADA, verdict: 'rechazo', condition: "the clave posted ≠ the XML's", source: 'none', validate: 'no' },
  { codigo: CODIGOS.DATOS_ENVIO, verdict: 'rechazo', condition: "the POST's emisor/receptor (or a MensajeReceptor's data) ≠ the XML's", source: 'none', validate: 'no' },
  { codigo: CODIGOS.TOTALES, verdict: 'rechazo', condition: 'a product (cantidad × precio, base × tarifa, the exoneración) off by more than 0.01, or another sum of ResumenFactura', source: 'none (ANEXOS pp.34-55 formulas; Hacienda\'s codes for these not seen)', validate: 'fecr finding' },
  { codigo: CODIGOS.TIPO_COMPROBANTE, verdict: 'rechazo', condition: "the consecutivo's tipo ≠ the document's kind", source: 'none', validate: 'no' },
  { codigo: CODIGOS.COMPROBANTE_DESCONOCIDO, verdict: 'rechazo', condition: 'a MensajeReceptor about a clave this emulator has not accepted', source: 'none', validate: 'no' },
  { codigo: CODIGOS.TIPO_IDENTIFICACION, verdict: 'rechazo', condition: "the other party's identification type for the kind (ANEXOS Nota 4: a foreign receptor in an FE only with CondicionVenta 12, …)", source: 'none (ANEXOS Nota 4, this emulator\'s reading)', validate: 'fecr finding' },
  { codigo: CODIGOS.REFERENCIA, verdict: 'rechazo', condition: 'a reference the kind may not make (ANEXOS p.56), or to a comprobante that cannot take it', source: 'none (ANEXOS p.56, Nota 5)', validate: 'no' },
  { codigo: CODIGOS.ACTIVIDAD_NO_CATALOGADA, verdict: 'aviso', condition: 'a CIIU-4-shaped activity code that fecr\'s catalogue (known to be incomplete) lacks', source: 'none (actividades/SOURCES.md: no list is complete)', validate: 'same code' },
  { codigo: CODIGOS.ACTIVIDAD_ANTIGUA, verdict: 'aviso', condition: 'fecr validate only: a code of the former catalogue, still accepted in March 2026, may stop being accepted', source: 'none (a note; the sandbox accepted 512102 with nothing listed)', validate: 'note' },
  { codigo: CODIGOS.RECHAZO_FORZADO, verdict: 'rechazo', condition: 'a rejection forced with --reject CLAVE', source: 'none (test fault)', validate: 'no' },
  { codigo: CODIGOS.ERROR_INTERNO, verdict: 'rechazo', condition: 'an internal error of the emulator', source: 'none', validate: 'no' },
];

const VALIDATE_WORDS: Record<EmulatorRule['validate'], string> = {
  'same code': 'same code',
  'fecr finding': "fecr's finding on the body",
  no: '—',
  note: 'warning',
};

/** The README's table of the emulator's rules. */
export function rulesMarkdown(): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const rows = RULES.map((r) => `| ${r.codigo ?? '(sin código)'} | ${r.verdict} | ${esc(r.condition)} | ${esc(r.source)} | ${VALIDATE_WORDS[r.validate]} |`);
  return ['| code | verdict | when | evidence | `fecr validate` |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}
