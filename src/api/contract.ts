/**
 * Wire types shared by the service's HTTP apps (src/server/) and the clients (src/client/): the shapes that travel
 * in the client API's bodies. Types only: no code, no import.
 */

/**
 * An issuer's record as registered, without any secret: never claveHacienda, pinCertificado,
 * certificadoHacienda nor the signing key decoded from the .p12.
 */
export interface IssuerDetails {
  identificacion: string;
  tipoIdentificacion: string;
  nombre?: string;
  nombreComercial: string;
  codigoActividad: string;
  sucursal: number;
  telefono: string;
  correoElectronico: string;
  ubicacion: { provincia: string; canton: string; distrito: string; barrio?: string; direccion: string };
  /** 1 production, 2 testing (Hacienda's sandbox). */
  ambiente: number;
  usuarioHacienda: string;
  proveedorSistemas?: string;
  /** ISO 8601 instants. */
  registeredAt: string;
  updatedAt: string;
  /** When the issuer's certificate (llave criptográfica) ends: its notAfter, an ISO 8601 instant. */
  certificateUntil?: string;
}

/** The issuer lookup (POST /api/consultar/emisor): exactly the spec's six fields. */
export interface IssuerSummary {
  identificacion: number;
  tipoIdentificacion: number;
  nombreComercial: string;
  correoElectronico: string;
  telefono: string;
  ambiente: number;
}

/** The spec's "Exoneration document". */
export interface ExoneracionSummary {
  numeroDocumento: string;
  estado: 'vigente' | 'vencido';
  porcentajeExoneracion: number;
  fechaVencimiento: string;
}

/** The spec's "CABYS entry". */
export interface CabysEntry {
  codigo: string;
  descripcion: string;
  /** Only when asked for (`impuesto: true`): the code's IVA rate, an integer percent (13, 4, 2, 1 or 0). */
  impuesto?: number;
}

/** The spec's "Taxpayer". */
export interface TaxpayerSummary {
  nombre: string;
  tipoIdentificacion: string;
  identificacion: string;
  /**
   * Only when asked for (`actividades: true`): active economic activities (codigo as Hacienda lists it, CIIU-4 e.g.
   * "6201.0"; ciiu3 the activity's code(s) of the former catalogue, when Hacienda lists them).
   */
  actividades?: { codigo: string; descripcion: string; ciiu3?: string[] }[];
  /** Only when asked for (`detalle: true`, which brings `actividades` too): the taxpayer's tax régimen… */
  regimen?: { codigo: number; descripcion: string };
  /** …and standing in Hacienda's registry (estado "Inscrito", …; moroso and omiso "SI" or "NO"). */
  situacion?: { estado: string; moroso: string; omiso: string; administracionTributaria: string };
}

/** Where a document stands: ours before Hacienda answers, then Hacienda's verdict. */
/** The document's state as the client API reports it (src/core/lifecycle.ts). */
export type DocumentEstado = import('../core/lifecycle.js').DocumentState;

export type ErrorHacienda = import('../core/xml/detalle-mensaje.js').ErrorHacienda;

export interface DocumentStatus {
  clave: string;
  estado: DocumentEstado;
  /** MensajeHacienda Mensaje: 1 aceptado, 2 parcial, 3 rechazado (once decided). */
  mensaje: number | null;
  detalleMensaje: string | null;
  /**
   * fecr's extension: the items Hacienda lists in detalleMensaje, as data (core/xml/detalle-mensaje.ts); `[]` before
   * the verdict or when nothing is listed. Optional for a service that predates it (the client reads detalleMensaje).
   */
  errores?: ErrorHacienda[];
  kind: string;
  numeroConsecutivo: string;
  fechaEmision: string;
  totalComprobante: string;
  moneda: string;
  receptorNombre: string | null;
  /** ISO 8601 instants. */
  createdAt: string;
  decidedAt: string | null;
  /** The latest mail of the comprobante to its receptor (null: none; absent: a service that does not say). */
  correo?: MailStatus | null;
}

/** A mail as `fecr status`, `fecr documents list` and the API show it. */
export interface MailStatus {
  estado: 'pendiente' | 'enviado' | 'fallido';
  destinatarios: string[];
  /** aceptado: the automatic mail; reenvio: asked again. */
  motivo: 'aceptado' | 'reenvio';
  intentos: number;
  /** The last SMTP reply (or connection error, or the outbox file). */
  ultimaRespuesta: string | null;
  messageId: string;
  /** ISO 8601 instants. */
  creadoAt: string;
  enviadoAt: string | null;
}

/** What POST /api/documentos/anular, /sustituir and /pago answer in `data` (issue 30): the new document's clave and number. */
export interface DocumentoDerivado {
  clave: string;
  numeroReferencia: number;
}

/** A document that references a comprobante (issue 30; POST /api/documentos/referencias, `fecr status`). */
export interface ReferenciaDe {
  clave: string;
  /** Its kind: NC, ND, REP, FE, … */
  tipo: string;
  estado: string;
  codigoReferencia: string | null;
  /** What it counts against the comprobante (NC/ND: its TotalComprobante; REP: the payment, base plus IVA), or null. */
  monto: string | null;
  fechaEmision: string;
}

/** Who references a comprobante and, for a sale, the balance left. */
export interface DocumentLinks {
  clave: string;
  referenciadoPor: ReferenciaDe[];
  /** Sales (FE, TE, FEE, ND): TotalComprobante − accepted NCs + accepted NDs − accepted REPs; 0 once rejected or annulled. */
  saldo?: string;
  /** The same, counting the notes and payments still on their way to Hacienda too. */
  saldoPendiente?: string;
  moneda?: string;
  /** The replacement (CodigoReferencia 16) that stands in place of this rejected comprobante, and its state (issue 36). */
  reemplazadoPor?: { clave: string; estado: string };
  /** The NC that annuls it in full (CodigoReferencia 01 or 13), and its state (issue 36). */
  anuladoPor?: { clave: string; estado: string };
}
