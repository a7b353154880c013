/**
 * Code tables of comprobantes v4.4 (ANEXOS notas; enumerations of the official XSDs).
 * One table per concept; labels in Spanish as the ANEXOS spell them.
 */
import { codeTable } from './code-table.js';

/** Nota 4: tipo de identificación, with the number format each requires. */
export const TIPOS_IDENTIFICACION: Record<string, { label: string; pattern: RegExp; rule: string }> = codeTable({
  '01': { label: 'Cédula Física', pattern: /^[1-9]\d{8}$/, rule: '9 digits, no leading zero' },
  '02': { label: 'Cédula Jurídica', pattern: /^\d{10}$/, rule: '10 digits' },
  '03': { label: 'DIMEX', pattern: /^[1-9]\d{10,11}$/, rule: '11 or 12 digits, no leading zero' },
  '04': { label: 'NITE', pattern: /^\d{10}$/, rule: '10 digits' },
  '05': { label: 'Extranjero No Domiciliado', pattern: /^[A-Za-z0-9]{1,20}$/, rule: 'up to 20 letters or digits' },
  '06': { label: 'No Contribuyente', pattern: /^[A-Za-z0-9]{1,20}$/, rule: 'up to 20 letters or digits' },
});

/** Nota 8: código del impuesto. */
export const CODIGOS_IMPUESTO: Record<string, string> = codeTable({
  '01': 'Impuesto al Valor Agregado',
  '02': 'Impuesto Selectivo de Consumo',
  '03': 'Impuesto Único a los Combustibles',
  '04': 'Impuesto específico de Bebidas Alcohólicas',
  '05': 'Impuesto Específico sobre las bebidas envasadas sin contenido alcohólico y jabones de tocador',
  '06': 'Impuesto a los Productos de Tabaco',
  '07': 'IVA (cálculo especial)',
  '08': 'IVA Régimen de Bienes Usados (Factor)',
  '12': 'Impuesto Específico al Cemento',
  '99': 'Otros',
});

/** Taxes added to the BaseImponible of the IVA (ANEXOS p.36). */
export const IMPUESTOS_EN_BASE_IMPONIBLE = new Set(['02', '04', '05', '12']);

/** Nota 8.1: código de la tarifa del IVA and its rate in percent. `ncndOnly` codes are transitional. */
export const TARIFAS_IVA: Record<string, { label: string; rate: string; ncndOnly?: boolean }> = codeTable({
  '01': { label: 'Tarifa 0% (Artículo 32, num 1, RLIVA)', rate: '0' },
  '02': { label: 'Tarifa reducida 1%', rate: '1' },
  '03': { label: 'Tarifa reducida 2%', rate: '2' },
  '04': { label: 'Tarifa reducida 4%', rate: '4' },
  '05': { label: 'Transitorio 0%', rate: '0', ncndOnly: true },
  '06': { label: 'Transitorio 4%', rate: '4', ncndOnly: true },
  '07': { label: 'Tarifa transitoria 8%', rate: '8', ncndOnly: true },
  '08': { label: 'Tarifa general 13%', rate: '13' },
  '09': { label: 'Tarifa reducida 0.5%', rate: '0.5' },
  '10': { label: 'Tarifa Exenta', rate: '0' },
  '11': { label: 'Tarifa 0% sin derecho a crédito', rate: '0' },
});

/** Nota 5: condiciones de la venta allowed in FE/NC/ND/TE (REP-only 09 and 11 excluded). */
export const CONDICIONES_VENTA: Record<string, string> = codeTable({
  '01': 'Contado',
  '02': 'Crédito',
  '03': 'Consignación',
  '04': 'Apartado',
  '05': 'Arrendamiento con opción de compra',
  '06': 'Arrendamiento en función financiera',
  '07': 'Cobro a favor de un tercero',
  '08': 'Servicios prestados al Estado',
  '10': 'Venta a crédito en IVA hasta 90 días (Artículo 27, LIVA)',
  '12': 'Venta de mercancía no nacionalizada',
  '13': 'Venta de bienes usados no contribuyente',
  '14': 'Arrendamiento operativo',
  '15': 'Arrendamiento financiero',
  '99': 'Otros',
});

/** Nota 5: the condiciones of a recibo electrónico de pago only (the payment of 08 and of 10). */
export const CONDICIONES_VENTA_REP: Record<string, string> = codeTable({
  '09': 'Pago de servicios prestados al Estado',
  '11': 'Pago de venta a crédito en IVA hasta 90 días (Artículo 27, LIVA)',
});

/** CondicionVenta values for which MedioPago may be omitted (ANEXOS p.54). */
export const CONDICIONES_SIN_MEDIO_PAGO = new Set(['02', '08', '10']);

/** Nota 6: tipo de medio de pago. */
export const MEDIOS_PAGO: Record<string, string> = codeTable({
  '01': 'Efectivo',
  '02': 'Tarjeta',
  '03': 'Cheque',
  '04': 'Transferencia - depósito bancario',
  '05': 'Recaudado por terceros',
  '06': 'SINPE MÓVIL',
  '07': 'Plataforma Digital',
  '99': 'Otros',
});

/** Nota 10.1: tipo de documento de exoneración. `ncndOnly` codes may only appear in NC/ND. */
export const TIPOS_EXONERACION: Record<string, { label: string; ncndOnly?: boolean; requiresArticulo?: boolean }> = codeTable({
  '01': { label: 'Compras autorizadas por la Dirección General de Tributación', ncndOnly: true },
  '02': { label: 'Ventas exentas a diplomáticos', requiresArticulo: true },
  '03': { label: 'Autorizado por Ley especial', requiresArticulo: true },
  '04': { label: 'Exenciones Dirección General de Hacienda Autorización Local Genérica' },
  '05': { label: 'Transitorio V (servicios de ingeniería, arquitectura, topografía obra civil)', ncndOnly: true },
  '06': { label: 'Servicios turísticos inscritos ante el Instituto Costarricense de Turismo (ICT)', ncndOnly: true },
  '07': { label: 'Transitorio XVII (Recolección, Clasificación, almacenamiento de Reciclaje y reutilizable)', ncndOnly: true },
  '08': { label: 'Exoneración a Zona Franca', requiresArticulo: true },
  '09': { label: 'Exoneración de servicios complementarios para la exportación articulo 11 RLIVA' },
  '10': { label: 'Órgano de las corporaciones municipales' },
  '11': { label: 'Exenciones Dirección General de Hacienda Autorización de Impuesto Local Concreta' },
  '99': { label: 'Otros' },
});

/** Nota 23: nombre de la institución que emitió la exoneración. */
export const INSTITUCIONES_EXONERACION: Record<string, string> = codeTable({
  '01': 'Ministerio de Hacienda',
  '02': 'Ministerio de Relaciones Exteriores y Culto',
  '03': 'Ministerio de Agricultura y Ganadería',
  '04': 'Ministerio de Economía, Industria y Comercio',
  '05': 'Cruz Roja Costarricense',
  '06': 'Benemérito Cuerpo de Bomberos de Costa Rica',
  '07': 'Asociación Obras del Espíritu Santo',
  '08': 'Federación Cruzada Nacional de protección al Anciano (Fecrunapa)',
  '09': 'Escuela de Agricultura de la Región Húmeda (EARTH)',
  '10': 'Instituto Centroamericano de Administración de Empresas (INCAE)',
  '11': 'Junta de Protección Social (JPS)',
  '12': 'Autoridad Reguladora de los Servicios Públicos (Aresep)',
  '99': 'Otros',
});

/** Nota 20: código del descuento. */
export const CODIGOS_DESCUENTO: Record<string, string> = codeTable({
  '01': 'Descuento por Regalía',
  '02': 'Descuento por Regalía o Bonificaciones IVA Cobrado al Cliente',
  '03': 'Descuento por Bonificación',
  '04': 'Descuento por volumen',
  '05': 'Descuento por Temporada (estacional)',
  '06': 'Descuento promocional',
  '07': 'Descuento Comercial',
  '08': 'Descuento por frecuencia',
  '09': 'Descuento sostenido',
  '99': 'Otros descuentos',
});

/** Nota 16: tipo de documento de otros cargos. */
export const TIPOS_OTROS_CARGOS: Record<string, string> = codeTable({
  '01': 'Contribución parafiscal',
  '02': 'Timbre de la Cruz Roja',
  '03': 'Timbre de Benemérito Cuerpo de Bomberos de Costa Rica',
  '04': 'Cobro de un tercero',
  '05': 'Costos de Exportación',
  '06': 'Impuesto de servicio 10%',
  '07': 'Timbre de Colegios Profesionales',
  '08': 'Depósitos de Garantía',
  '09': 'Multas o Penalizaciones',
  '10': 'Intereses Moratorios',
  '99': 'Otros Cargos',
});

/** Nota 9: código de referencia (the April-2026 XSDs; 17 only in the recibo electrónico de pago). */
export const CODIGOS_REFERENCIA: Record<string, string> = codeTable({
  '01': 'Anula documento de referencia',
  '02': 'Corrige monto',
  '04': 'Referencia a otro documento',
  '05': 'Sustituye comprobante provisional por contingencia',
  '06': 'Devolución de mercancía',
  '07': 'Sustituye comprobante electrónico',
  '08': 'Factura Endosada',
  '09': 'Nota de crédito financiera',
  '10': 'Nota de débito financiera',
  '11': 'Proveedor No Domiciliado',
  '12': 'Crédito por exoneración posterior a la facturación',
  '13': 'Anula documento de referencia por error material',
  '14': 'Corrige monto por error material',
  '15': 'Sustituye comprobante electrónico por error material',
  '16': 'Sustituye comprobante electrónico rechazado',
  '17': 'Pago a comprobante electrónico',
  '99': 'Otros',
});

/** Códigos de referencia that only the recibo electrónico de pago (REP) accepts. */
export const CODIGOS_REFERENCIA_SOLO_REP = new Set(['17']);

/** Nota 10: tipo de documento de referencia (the April-2026 XSDs). */
export const TIPOS_DOC_REFERENCIA: Record<string, string> = codeTable({
  '01': 'Factura electrónica',
  '02': 'Nota de débito electrónica',
  '03': 'Nota de crédito electrónica',
  '04': 'Tiquete electrónico',
  '05': 'Nota de despacho',
  '06': 'Contrato',
  '07': 'Procedimiento',
  '08': 'Comprobante emitido en contingencia',
  '09': 'Devolución mercadería',
  '10': 'Comprobante electrónico rechazado por el Ministerio de Hacienda',
  '11': 'Sustituye factura rechazada por el Receptor del comprobante',
  '12': 'Sustituye Factura de exportación',
  '13': 'Facturación mes vencido',
  '14': 'Comprobante aportado por contribuyente de Régimen Especial',
  '15': 'Sustituye una Factura electrónica de Compra',
  '16': 'Comprobante de Proveedor No Domiciliado',
  '17': 'Nota de Crédito a Factura Electrónica de Compra',
  '18': 'Nota de Débito a Factura Electrónica de Compra',
  '19': 'Factura Electrónica de Exportación',
  '20': 'Recibo Electrónico de Pago',
  '99': 'Otros',
});

/** Nota 22: tipo de transacción. */
export const TIPOS_TRANSACCION = new Set(['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12', '13']);

/** Código comercial Tipo values. */
export const TIPOS_CODIGO_COMERCIAL = new Set(['01', '02', '03', '04', '99']);

/** Nota 15: unidades de medida (UnidadMedidaType; case-sensitive, Ω is U+2126). */
export const UNIDADES_MEDIDA = new Set<string>(["1", "´", "´´", "°C", "1/m", "A", "A/m", "A/m²", "Acv", "Al", "Alc", "B", "Bq", "C", "C/kg", "C/m²", "C/m³", "Cc", "Cd", "cd/m²", "Cm", "cm", "Cu", "D", "eV", "F", "F/m", "Fa", "G", "Gal", "Gy", "Gy/s", "h", "H", "H/m", "Hz", "I", "J", "J/(kg·K)", "J/(mol·K)", "J/K", "J/kg", "J/m³", "J/mol", "K", "Kat", "kat/m³", "Kg", "kg/m³", "Km", "Kw", "kWh", "L", "Lm", "Ln", "Lx", "M", "m/s", "m/s²", "m²", "m³", "Min", "mL", "Mm", "Mol", "mol/m³", "N", "N/m", "N·m", "Np", "º", "Os", "Otros", "Oz", "Pa", "Pa·s", "Qq", "Rad", "rad/s", "rad/s²", "S", "s", "Sp", "Spe", "Sr", "St", "Sv", "t", "T", "U", "Ua", "Unid", "V", "V/m", "W", "W/(m·K)", "W/(m²·sr)", "W/m²", "W/sr", "Wb", "Ω"]);

/** ISO 4217 codes accepted by CodigoMoneda in the v4.4 XSD. */
export const MONEDAS = new Set<string>(["AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYR", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CUC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HRK", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRO", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLL", "SOS", "SRD", "SSP", "STD", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "USN", "UYI", "UYU", "UZS", "VEF", "VND", "VUV", "WST", "XAF", "XCD", "XDR", "XOF", "XPF", "XSU", "XUA", "YER", "ZAR", "ZMW", "ZWL"]);
