/**
 * zod schemas of the inputs: the spec's "Electronic document" body (with fecr's documented
 * extensions) and the Issuer record (the spec's registration shape). Types follow the spec:
 * money is a decimal string where the spec says string; numbers (or numeric strings) where it says number.
 * Field-level format rules live here; cross-field rules live in ../document.ts.
 * Every object refuses keys it does not name (`strictObject`): a misspelt field is a finding, never dropped in silence.
 */
import { z } from 'zod';
import { forbiddenXmlChar, forbiddenXmlCharMessage } from '../xml/canonical.js';
import { strictObject } from './unknown-keys.js';
import { actividadFromInput } from '../catalog/actividades.js';

/**
 * A string schema that first refuses the characters XML 1.0 cannot carry (C0 controls but TAB, LF and CR; U+FFFE,
 * U+FFFF; lone surrogates): `contains U+0007, not allowed in XML`, a finding at the field's path. Every string of
 * the body and of the issuer record is one of these, so such a character never reaches the XML writer. U+FFFD too:
 * XML carries it, but it is what a decoder writes for a byte it could not read (a Latin-1 file read as UTF-8), so a
 * signed document would hold "Consultor�a" for good.
 */
function str(params?: Parameters<typeof z.string>[0]) {
  return z.string(params).check((ctx) => {
    const cp = forbiddenXmlChar(ctx.value);
    if (cp !== undefined) ctx.issues.push({ code: 'custom', message: forbiddenXmlCharMessage(cp), input: ctx.value });
    else if (ctx.value.includes('\uFFFD')) ctx.issues.push({ code: 'custom', message: REPLACEMENT_CHAR_MESSAGE, input: ctx.value });
  });
}

/** The finding of a string that holds U+FFFD. */
export const REPLACEMENT_CHAR_MESSAGE = 'contains U+FFFD (a character lost in a wrong encoding)';

/** The error of a fixed-value schema (literal, enum): names a forbidden character when there is one, else `message`. */
function fixedValueError(message: string) {
  return (iss: { input?: unknown }): string => {
    const cp = typeof iss.input === 'string' ? forbiddenXmlChar(iss.input) : undefined;
    return cp === undefined ? message : forbiddenXmlCharMessage(cp);
  };
}

const DECIMAL = /^\d{1,13}(\.\d{1,5})?$/;

/** A non-negative decimal amount in a string: up to 13 integer digits and 5 decimals. */
export const MoneyString = str({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a decimal amount in a string, e.g. "1000.00"') })
  .trim()
  .regex(DECIMAL, 'must be a non-negative decimal in a string with at most 5 decimals, e.g. "1000.00"');

/** Where the spec says number: a JSON number or a numeric string, non-negative. */
export const NumberLike = z.union([
  z.number().finite().nonnegative('must not be negative'),
  str().trim().regex(DECIMAL, 'must be a non-negative number'),
]);

const Integer = (min: number, max: number) =>
  z.union([
    z.number().int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
    str()
      .trim()
      .regex(/^\d{1,10}$/, 'must be an integer')
      .transform(Number)
      .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`)),
  ]);

/** A code of two digits; a one-digit value is accepted and padded ("1" → "01"). */
const Code2 = z
  .union([str().trim(), z.number().int().nonnegative()])
  .transform((v) => String(v).padStart(2, '0'))
  .pipe(z.string().regex(/^\d{2}$/, 'must be a two-digit code'));

const text = (min: number, max: number) =>
  str().trim().min(min, `must have at least ${min} characters`).max(max, `must have at most ${max} characters`);

const Email = str()
  .trim()
  .max(160, 'must have at most 160 characters')
  .regex(/^\w+([-+.']\w+)*@\w+([-.]\w+)*\.\w+([-.]\w+)*$/, 'must be an e-mail address');

/** ISO 8601 date-time, with or without offset; checked for calendar validity in document.ts. */
const DateTimeText = str().trim().min(10, 'must be an ISO 8601 date-time');

export const IdentificacionInput = strictObject({
  tipo: Code2,
  numero: str().trim().min(1, 'is required').max(20, 'must have at most 20 characters'),
});

export const UbicacionInput = strictObject({
  provincia: str().trim().regex(/^[1-7]$/, 'must be a province code 1 to 7'),
  canton: str().trim().regex(/^\d{2}$/, 'must be a two-digit canton code'),
  distrito: str().trim().regex(/^\d{2}$/, 'must be a two-digit district code'),
  barrio: str().trim().max(50, 'must have at most 50 characters').optional(),
  direccion: text(5, 250),
});

export const ReceptorInput = strictObject({
  nombre: text(3, 100),
  telefono: str().trim().optional(),
  identificacion: IdentificacionInput,
  correoElectronico: Email.optional(),
  // fecr extensions
  nombreComercial: text(3, 80).optional(),
  ubicacion: UbicacionInput.optional(),
  otrasSenasExtranjero: text(5, 300).optional(),
});

export const ExoneracionInput = strictObject({
  tipoDocumento: Code2,
  numeroDocumento: text(3, 40),
  nombreInstitucion: Code2,
  fechaEmision: DateTimeText,
  porcentajeExoneracion: NumberLike,
  nombreInstitucionOtros: text(5, 160).optional(),
  articulo: z.union([str().trim().regex(/^\d{1,6}$/, 'must be up to 6 digits'), z.number().int().nonnegative()]).optional(),
  inciso: z.union([str().trim().regex(/^\d{1,6}$/, 'must be up to 6 digits'), z.number().int().nonnegative()]).optional(),
  // fecr extension: text for tipoDocumento 99
  tipoDocumentoOtro: text(5, 100).optional(),
});

export const ImpuestoInput = strictObject({
  codigo: Code2,
  /** Required for codigo 01 and 07 (checked in document.ts). */
  codigoTarifa: Code2.optional(),
  tarifa: str().trim().regex(/^\d{1,2}(\.\d{1,2})?$/, 'must be a percentage in a string, e.g. "13"'),
  monto: MoneyString,
  exoneracion: ExoneracionInput.optional(),
  // fecr extensions
  codigoImpuestoOtro: text(5, 100).optional(),
  factorCalculoIVA: str().trim().regex(/^0(\.\d{1,4})?$|^1(\.0{1,4})?$/, 'must be a factor between 0 and 1 with up to 4 decimals').optional(),
});

export const LineaInput = strictObject({
  numeroLinea: Integer(1, 1000),
  codigo: str().trim().regex(/^\d{13}$/, 'must be a 13-digit CABYS code'),
  detalle: text(3, 200),
  cantidad: z
    .union([z.number().finite(), str().trim().regex(/^-?\d+(\.\d+)?$/, 'must be a number')])
    .transform(String)
    .pipe(
      z
        .string()
        .refine((v) => !v.startsWith('-') && !/^0+(\.0+)?$/.test(v), 'must be greater than 0')
        .refine((v) => /^\d{1,13}(\.\d{1,3})?$/.test(v), 'must have at most 13 integer digits and 3 decimals'),
    ),
  unidadMedida: str().trim().min(1, 'is required'),
  unidadMedidaComercial: str().trim().max(20, 'must have at most 20 characters').optional(),
  precioUnitario: MoneyString,
  subTotal: MoneyString,
  descuento: MoneyString.optional(),
  montoTotal: MoneyString,
  impuestoNeto: NumberLike,
  montoTotalLinea: NumberLike,
  codigoComercial: z
    .array(strictObject({ tipo: Code2, codigo: text(1, 20) }))
    .max(5, 'must have at most 5 entries')
    .optional(),
  impuesto: z.array(ImpuestoInput).min(1, 'must have at least one tax entry (exempt lines use codigoTarifa "10")').max(1000),
  // fecr extensions
  codigoDescuento: Code2.optional(),
  naturalezaDescuento: text(3, 80).optional(),
  tipoTransaccion: Code2.optional(),
  ivaCobradoFabrica: Code2.optional(),
  /** FEE (and NC/ND): the 12-digit tariff heading of an exported good (Nota 17). */
  partidaArancelaria: str().trim().regex(/^\d{12}$/, 'must be the 12-digit partida arancelaria, e.g. "090111000000"').optional(),
});

/**
 * A line of a recibo electrónico de pago (tipoDoc "10"): the payment of a credit sale, without CABYS, quantity or
 * price. Same names as the other lines: `subTotal` is the amount originally invoiced without taxes (the XML's
 * MontoTotal), `montoTotal` the amount of this payment (the XML's SubTotal), on which the IVA is computed.
 */
export const RepLineaInput = strictObject({
  numeroLinea: Integer(1, 1000),
  detalle: text(3, 200),
  subTotal: MoneyString,
  montoTotal: MoneyString,
  impuesto: z.array(ImpuestoInput).min(1, 'must have at least one tax entry: the IVA due on the payment').max(1000),
  impuestoNeto: NumberLike,
  montoTotalLinea: NumberLike,
});

export const OtroCargoInput = strictObject({
  tipoDocumento: Code2,
  detalle: text(1, 160),
  montoCargo: MoneyString,
  porcentaje: str().trim().regex(/^\d{1,4}(\.\d{1,5})?$/, 'must be a percentage in a string, e.g. "10"').optional(),
  nombreTercero: text(5, 100).optional(),
  // fecr extensions
  tipoDocumentoOtros: text(5, 100).optional(),
  identificacionTercero: IdentificacionInput.optional(),
});

export const MedioPagoInput = strictObject({
  tipoMedioPago: Code2,
  totalMedioPago: MoneyString.optional(),
  medioPagoOtros: text(3, 100).optional(),
});

/** Totals a client may send in resumenFactura; each one present is checked against ours. */
export const RESUMEN_TOTAL_FIELDS = [
  'totalServGravados',
  'totalServExentos',
  'totalServExonerado',
  'totalServNoSujeto',
  'totalMercanciasGravadas',
  'totalMercanciasExentas',
  'totalMercExonerada',
  'totalMercNoSujeta',
  'totalGravado',
  'totalExento',
  'totalExonerado',
  'totalNoSujeto',
  'totalVenta',
  'totalDescuentos',
  'totalVentaNeta',
  'totalImpuesto',
  'totalImpAsumEmisorFabrica',
  'totalIVADevuelto',
  'totalOtrosCargos',
  'totalComprobante',
] as const;
export type ResumenTotalField = (typeof RESUMEN_TOTAL_FIELDS)[number];

const resumenTotals = Object.fromEntries(RESUMEN_TOTAL_FIELDS.map((f) => [f, NumberLike.optional()])) as Record<
  ResumenTotalField,
  z.ZodOptional<typeof NumberLike>
>;

export const ResumenInput = strictObject({
  codigoTipoMoneda: strictObject({
    codigoMoneda: str().trim().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code, e.g. "CRC"'),
    // "auto" (issue 29): the service fills in Hacienda's rate of the document's day before parsing; one that reaches
    // the schema (no rate to be had, or fecr validate offline) is a missing tipoCambio, judged as one.
    tipoCambio: z
      .union([str().trim(), z.number().finite()])
      .transform(String)
      .pipe(z.union([z.string().regex(/^auto$/i).transform(() => undefined), z.string().regex(DECIMAL, 'must be a positive decimal, e.g. "512.34", or "auto"')]))
      .optional(),
  }),
  mediosPago: z.array(MedioPagoInput).max(4, 'must have at most 4 entries').optional(),
  ...resumenTotals,
});

export const ReferenciaInput = strictObject({
  tipoDocIR: Code2,
  numero: str().trim().max(50, 'must have at most 50 characters').optional(),
  fechaEmision: DateTimeText,
  codigo: Code2.optional(),
  razon: text(3, 180).optional(),
  tipoDocRefOtro: text(5, 100).optional(),
  codigoReferenciaOtro: text(5, 100).optional(),
});

/**
 * An economic activity code as Hacienda writes it: CIIU-4 `NNNN.N` (`6201.0`, what /fe/ae lists since TRIBU-CR) or a
 * six-digit code of the former catalogue. A number (the spec types the issuer's `codigoActividad` as one) is read by
 * core/catalog/actividades.ts `actividadFromInput` (`6201` → `6201.0`, `11102` → `011102`). Whether the code is in
 * Hacienda's catalogue is a rule of its own (core/rules/registry-rules.ts, -408).
 */
export const ActividadInput = z
  .union([str(), z.number()])
  .transform(actividadFromInput)
  .pipe(z.string().length(6, 'must be the economic activity code as Hacienda writes it: CIIU-4 "6201.0" (or a six-digit code of the former catalogue)'));

/** The seller of a factura electrónica de compra (tipoDoc "8"), written as its Emisor; the issuer is its Receptor. */
export const ProveedorInput = strictObject({
  nombre: text(5, 100),
  identificacion: IdentificacionInput,
  nombreComercial: text(3, 80).optional(),
  ubicacion: UbicacionInput.optional(),
  otrasSenasExtranjero: text(5, 300).optional(),
  telefono: str().trim().optional(),
  correoElectronico: Email.optional(),
  codigoActividad: ActividadInput.optional(),
});

const DOCUMENT_FIELDS = {
  emisor: z.union([str().trim().min(1, 'is required'), z.number().int().positive()]).transform(String),
  numeroReferencia: Integer(1, 9_999_999_999),
  codigoActividad: ActividadInput,
  tipoDoc: z.union([str().trim(), z.number().int()]).transform(String),
  folioType: z.literal('INVOICE', { error: fixedValueError('must be "INVOICE"') }),
  fechaEmision: DateTimeText,
  receptor: z.union([z.literal(''), ReceptorInput], { error: fixedValueError('must be a receiver object, or "" for a ticket without receiver') }),
  detalleServicio: z.array(LineaInput).min(1, 'must have at least one line').max(1000, 'must have at most 1000 lines'),
  otrosCargos: z.array(OtroCargoInput).max(15, 'must have at most 15 entries').optional(),
  resumenFactura: ResumenInput,
  // fecr extensions (documented in the README)
  sucursal: Integer(1, 999).optional(),
  terminal: Integer(1, 99_999).optional(),
  situacion: z.enum(['1', '2', '3'], { error: fixedValueError('must be "1" (normal), "2" (contingencia) or "3" (sin internet)') }).optional(),
  condicionVenta: Code2.optional(),
  condicionVentaOtros: text(5, 100).optional(),
  plazoCredito: Integer(0, 99_999).optional(),
  proveedorSistemas: text(1, 20).optional(),
  codigoActividadReceptor: ActividadInput.optional(),
  informacionReferencia: z.array(ReferenciaInput).max(10, 'must have at most 10 entries').optional(),
  /** More addresses the accepted comprobante is mailed to, besides receptor.correoElectronico (not in the XML). */
  correosAdicionales: z.array(Email).max(10, 'must have at most 10 addresses').optional(),
  /** FEC (tipoDoc "8"): the seller, written as the XML's Emisor. */
  proveedor: ProveedorInput.optional(),
};

export const DocumentBody = strictObject(DOCUMENT_FIELDS);
/** The body of a recibo electrónico de pago (tipoDoc "10"): its lines are payments (RepLineaInput). */
export const RepDocumentBody = strictObject({
  ...DOCUMENT_FIELDS,
  detalleServicio: z.array(RepLineaInput).min(1, 'must have at least one line').max(1000, 'must have at most 1000 lines'),
});
export type DocumentBody = z.infer<typeof DocumentBody>;
export type RepDocumentBody = z.infer<typeof RepDocumentBody>;
export type RepLineaInput = z.infer<typeof RepLineaInput>;
export type ProveedorInput = z.infer<typeof ProveedorInput>;
export type LineaInput = z.infer<typeof LineaInput>;
export type ImpuestoInput = z.infer<typeof ImpuestoInput>;

/** The issuer record, in the spec's registration shape (plus optional `nombre`, `proveedorSistemas`). */
export const IssuerRecord = strictObject({
  identificacion: z
    .union([z.number().int().positive(), str().trim().regex(/^[A-Za-z0-9]{9,12}$/, 'must be 9 to 12 digits')])
    .transform(String),
  tipoIdentificacion: z
    .union([z.number().int(), str().trim()])
    .transform((v) => String(v).padStart(2, '0'))
    .pipe(z.enum(['01', '02', '03', '04'], { error: 'must be 1 (física), 2 (jurídica), 3 (DIMEX) or 4 (NITE)' })),
  codigoActividad: ActividadInput,
  sucursal: Integer(1, 999),
  nombreComercial: text(3, 80),
  telefono: str().trim().min(8, 'must be a phone number'),
  correoElectronico: Email,
  ubicacion: UbicacionInput,
  ambiente: z.union([z.literal(1), z.literal(2), z.literal('1'), z.literal('2')], {
    error: fixedValueError('must be 1 (production) or 2 (testing/sandbox)'),
  }).transform(Number),
  usuarioHacienda: str().trim().min(1, 'is required'),
  claveHacienda: str().min(1, 'is required'),
  pinCertificado: str().min(1, 'is required'),
  certificadoHacienda: str().trim().min(1, 'is required'),
  // fecr extensions
  nombre: text(5, 100).optional(),
  proveedorSistemas: text(1, 20).optional(),
});
export type IssuerRecord = z.infer<typeof IssuerRecord>;
