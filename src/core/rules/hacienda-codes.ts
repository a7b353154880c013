/**
 * Hacienda's answer codes and texts, as its real answers show them (NOTES §6.3, word for word), and fecr's own codes
 * in the -9000 range where no real answer shows Hacienda's (README, "the emulator's own codes"). Shared by the
 * emulator (what it answers) and `fecr validate` (the findings it reports with Hacienda's code): one set of words.
 */

export const CODIGOS = {
  // Hacienda's codes, as its real answers show them (NOTES §6.3).
  /** Schema (only the first error is listed) and, here, an XML that cannot be read at all. */
  ESQUEMA: -1,
  CLAVE_IDENTIFICACION: -8,
  CLAVE_CONSECUTIVO: -23,
  /** aviso: the issuer's location differs from the registry's. */
  UBICACION: -37,
  TARIFA_OBLIGATORIA: -45,
  TOTAL_LINEA: -46,
  TOTAL_DESCUENTOS: -52,
  /** A later day: rejection; later the same day: aviso. */
  FECHA_EMISION: -53,
  TOTAL_IMPUESTO: -54,
  PLAZO_CREDITO: -58,
  FIRMANTE: -60,
  CONSECUTIVO_REPETIDO: -99,
  CABYS: -400,
  CLAVE_FECHA: -405,
  /** aviso: an activity of the catalogue that the issuer has not registered. */
  ACTIVIDAD_NO_REGISTRADA: -407,
  ACTIVIDAD_INVALIDA: -408,
  DESGLOSE_IMPUESTO: -487,
  MEDIO_PAGO_OTROS: -492,
  TARIFA_EXENTO: -505,
  // This emulator's own: checks whose Hacienda code no real answer shows (README, "the emulator's own codes").
  /** The clave posted is not the XML's. */
  CLAVE_ENVIADA: -9001,
  /** The POST's emisor / receptor, or a MensajeReceptor's data, disagree with the XML. */
  DATOS_ENVIO: -9002,
  /** A figure that is not one of the sums above: a product off by more than 0.01, or another sum. */
  TOTALES: -9003,
  /** The consecutivo's tipo is not the document's kind. */
  TIPO_COMPROBANTE: -9004,
  /** A MensajeReceptor about a clave this Hacienda never received (or did not accept). */
  COMPROBANTE_DESCONOCIDO: -9005,
  /** The other party's tipo de identificación is not one the kind allows (Nota 4; kinds.ts). */
  TIPO_IDENTIFICACION: -9006,
  /** A reference the kind may not make, or to a comprobante that cannot take it (kinds.ts). */
  REFERENCIA: -9007,
  /** aviso: an activity code of the CIIU-4 form (`NNNN.N`) that fecr's catalogue, known to be incomplete, lacks. */
  ACTIVIDAD_NO_CATALOGADA: -9010,
  /** aviso, `fecr validate` only (the sandbox lists nothing for it): a code of the former six-digit catalogue. */
  ACTIVIDAD_ANTIGUA: -9011,
  RECHAZO_FORZADO: -9090,
  ERROR_INTERNO: -9098,
} as const;

/** Hacienda's texts (NOTES §6.3, verbatim). */
export const TEXTOS = {
  clave8: 'El número de identificación de la clave numérica no coincide con el número de identificación del emisor.',
  clave23: 'La numeración del consecutivo del comprobante no coincide con el valor de la clave.',
  clave405: 'La fecha de la clave númerica no concuerda con el campo Fecha Emisión del comprobante',
  ubicacion37:
    "Estimado obligado tributario los datos suministrados en provincia, cantón y distrito del 'emisor' no concuerdan con la información registrada en la Dirección General de Tributación, favor proceder actualizar sus datos.",
  tarifa45: (linea: string) => `En la línea (${linea}) el campo de Tarifa es obligatorio para el Codigo de Impuesto 01`,
  linea46: (linea: string) => `El monto total de la línea (${linea}) no coincide con la suma de los campos denominados subtotal y monto del impuesto.`,
  descuentos52: 'El monto total de descuentos no coincide con la suma de los descuentos concedidos',
  fechaDia53: 'La fecha de emisión del comprobante electrónico no puede ser superior al día de hoy.',
  fechaHora53: 'La hora indicada en la emisión del archivo XML no coincide con la hora oficial.',
  impuesto54: "El monto total de impuestos no coincide con la suma de los campos denominados 'Monto del Impuesto'",
  plazo58: "El campo denominado 'Plazo del crédito' no posee la estructura establecida para el mismo.",
  firmante60: 'El contribuyente que firma la factura electrónica no es el emisor.',
  consecutivo99: (consecutivo: string, desde: string, clave: string) =>
    `La numeración consecutiva ${consecutivo} del comprobante que se está utilizando para este archivo XML ya existe en nuestras bases de datos desde el día ${desde} en la clave ${clave}`,
  cabys400: (linea: string) =>
    `En la línea (${linea}) el código indicado en el campo 'Código de Producto/Servicio' no se encuentra en el Catálogo de Bienes y Servicios CAByS, por favor verifique la codificación utilizada para el producto o servicio facturado. El CAByS se encuentra disponible en el portal web del Banco Central de Costa Rica`,
  actividad407:
    'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico no se encuentra Registrado ante el Ministerio de Hacienda para este contribuyente, favor verificar',
  actividad408:
    'El Código de la Actividad Económica del emisor que se indica en el comprobante electrónico, no es un código valido conforme el Catalogo de Actividades Económicas del Registro Único Tributario.',
  desglose487: 'El documento posee detalle de Impuesto pero carece del campo Total Desglose Impuestos',
  medioPago492: "El Tipo Medio Pago OTRO es obligatorio cuando se utilice el Tipo de Medio Pago '99'",
  tarifa505: (linea: string) => `En la línea (${linea}), para el código de tarifa '10' la tarifa debe ser 0`,
  /** fecr's own (-9010). */
  actividadNoCatalogada: (codigo: string) =>
    `El código de actividad ${codigo} tiene la forma CIIU-4 pero no está en el catálogo de actividades que conoce fecr, que es incompleto: verifique que sea una actividad del Registro Único Tributario (consulta /fe/ae).`,
  /** fecr's own (-9011). */
  actividadAntigua: (codigo: string, sucesor: string) =>
    `El código ${codigo} es del catálogo de actividades anterior a TRIBU-CR; Hacienda aún lo aceptaba en marzo de 2026, pero puede dejar de aceptarlo sin aviso${sucesor ? `: su equivalente CIIU-4 es ${sucesor}` : ''}.`,
  firmaNoXades: 'La firma del documento no es XAdES, se obtuvo [ERROR]',
  firmaSinPolitica: 'La firma del documento no tiene el Policy Id',
  firmaInvalida: (motivo: string) => `La firma del comprobante electrónico no es válida (${motivo})`,
} as const;

/**
 * The codes Hacienda lists as warnings (the document stands; NOTES §6.3): -37, -407, fecr's -9010 and -9011, and -53
 * when its text is the same-day one (a later day's -53 is a rejection). Under a rejection Hacienda lists warnings too;
 * this tells them apart when DetalleMensaje is read back (core/xml/detalle-mensaje.ts).
 */
const AVISOS: ReadonlySet<number> = new Set([CODIGOS.UBICACION, CODIGOS.ACTIVIDAD_NO_REGISTRADA, CODIGOS.ACTIVIDAD_NO_CATALOGADA, CODIGOS.ACTIVIDAD_ANTIGUA]);

export function esAviso(codigo: number | null, mensaje: string): boolean {
  if (codigo === null) return false;
  return AVISOS.has(codigo) || (codigo === CODIGOS.FECHA_EMISION && mensaje === TEXTOS.fechaHora53);
}
