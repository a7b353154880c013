/**
 * The client API's OpenAPI 3.1 document, generated from the same zod schemas the app validates with
 * (zod 4 `z.toJSONSchema`, JSON Schema 2020-12 as OpenAPI 3.1 uses it).
 *
 * Besides the eight endpoints of SERVICE-SPEC it lists fecr's additive endpoints (src/server/api-extra.ts:
 * document status and listing for the CLI's remote mode, the account's webhook URL), each tagged
 * "fecr extensions" and marked `x-fecr-extension: true`.
 */
import { z } from 'zod';
import type { DocumentStatus, IssuerDetails } from '../client/backend.js';
import { DocumentBody, IssuerRecord, RepLineaInput } from '../core/input/schema.js';
import { EmailBody, IssuersBody, ListBody, STATES, StatusBody, WebhookBody } from './api-extra.js';
import { RECIBIDOS_ENDPOINTS, RECIBIDOS_SCHEMAS } from './api-recibidos.js';
import { REPORTES_ENDPOINTS, REPORTES_SCHEMAS } from './api-reportes.js';
import { ARCHIVO_ENDPOINTS, ARCHIVO_SCHEMAS } from './api-archivo.js';
import { DOCUMENTOS_ENDPOINTS, DOCUMENTOS_SCHEMAS } from './api-documentos.js';
import { CONTINGENCIA_ENDPOINTS, CONTINGENCIA_SCHEMAS } from './api-contingencia.js';
import {
  CabysBody,
  CabysEntrySchema,
  dataResponse,
  ErrorBodySchema,
  ExoneracionBody,
  ExoneracionSchema,
  FileBody,
  IssuerLookupBody,
  IssuerPublicSchema,
  MessageResponse,
  StoredFileSchema,
  SubmitResponse,
  TaxpayerBody,
  TaxpayerSchema,
} from './api-schemas.js';
import { IDEMPOTENCY_PARAMETER } from './idempotency-key.js';

type JsonSchema = Record<string, unknown>;

function schema(s: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

interface Endpoint {
  path: string;
  summary: string;
  request: string;
  response: string;
  /** Error statuses besides 401 (every endpoint has 401). */
  errors: number[];
  /** An endpoint beyond SERVICE-SPEC (src/server/api-extra.ts). */
  extension?: boolean;
  /** Query parameters (fecr extensions to a SERVICE-SPEC endpoint). */
  parameters?: JsonSchema[];
  /** The success answer is a file of this media type (`response`), not JSON. */
  binary?: boolean;
}

/** POST /api/enviar/items?completar=1 (src/server/api-app.ts asksCompletion, src/core/input/complete.ts). */
const COMPLETAR: JsonSchema = {
  name: 'completar',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['1', 'true'] },
  description:
    'fecr extension: compute the figures the body leaves out (each line\'s subTotal, montoTotal, impuesto[].monto, ' +
    'impuestoNeto, montoTotalLinea; the resumenFactura totals; totalMedioPago of a lone payment method) from what it ' +
    'decides (cantidad, precioUnitario, descuento, impuesto codigo/codigoTarifa/tarifa, exoneracion, otrosCargos, mediosPago), ' +
    'with the ANEXOS v4.4 formulas (5 decimals, half-up); also numeroLinea, folioType and an IVA entry\'s tarifa from its ' +
    'codigoTarifa. A figure that is given is checked as always. Without it, the figures SERVICE-SPEC requires are required ' +
    '(a 400 names the missing ones).',
  'x-fecr-extension': true,
};

/** POST /api/enviar/items?forzar=1 (src/server/api-app.ts asksForce, src/service/pre-sign-checks.ts). */
const FORZAR: JsonSchema = {
  name: 'forzar',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['1', 'true'] },
  description:
    'fecr extension: sign and send the document even when it has findings Hacienda rejects it for (the rules fecr ' +
    'validate reports with Hacienda\'s code: -400 a CABYS code not in the catalogue, -408 an invalid activity code, -53 ' +
    'a FechaEmision on a later day). Without it such a body is a 400 (`details`: one finding per path, in Hacienda\'s ' +
    'words), before any consecutivo is used. Warnings never refuse a body.',
  'x-fecr-extension': true,
};

const ENDPOINTS: Endpoint[] = [
  { path: '/api/enviar/items', summary: 'Submit an electronic document', request: 'DocumentBody', response: 'SubmitResponse', errors: [400, 409], parameters: [COMPLETAR, FORZAR, IDEMPOTENCY_PARAMETER] },
  { path: '/api/enviar/emisor', summary: 'Register an issuer', request: 'IssuerRecord', response: 'MessageResponse', errors: [400] },
  { path: '/api/actualizar/emisor', summary: 'Update a registered issuer (creates it when unknown)', request: 'IssuerRecord', response: 'MessageResponse', errors: [400] },
  { path: '/api/consultar/emisor', summary: 'Look up an issuer', request: 'IssuerLookupBody', response: 'IssuerLookupResponse', errors: [400, 404] },
  { path: '/api/hacienda/exoneracion', summary: 'Validate an exoneration document with Hacienda', request: 'ExoneracionBody', response: 'ExoneracionResponse', errors: [400, 404, 503] },
  { path: '/api/hacienda/cabys', summary: 'Search CABYS codes by name', request: 'CabysBody', response: 'CabysResponse', errors: [400, 503] },
  { path: '/api/consultar/archivo', summary: 'Download the file of a sent document', request: 'FileBody', response: 'FileResponse', errors: [400, 404, 429] },
  { path: '/api/hacienda/identificacion', summary: 'Look up a taxpayer', request: 'TaxpayerBody', response: 'TaxpayerResponse', errors: [400, 404, 503] },
  // fecr extensions (not in SERVICE-SPEC): same bearer authentication, tenancy and error bodies.
  {
    path: '/api/consultar/estado',
    summary: "The state of a sent document and Hacienda's verdict (fecr extension, not in SERVICE-SPEC)",
    request: 'StatusBody',
    response: 'DocumentStatusResponse',
    errors: [400, 404],
    extension: true,
  },
  {
    path: '/api/consultar/documentos',
    summary: "The account's documents, newest first, by state and creation date (fecr extension, not in SERVICE-SPEC)",
    request: 'ListBody',
    response: 'DocumentListResponse',
    errors: [400],
    extension: true,
  },
  {
    path: '/api/consultar/webhook',
    summary: "The account's webhook URL (fecr extension, not in SERVICE-SPEC)",
    request: 'EmptyBody',
    response: 'WebhookUrlResponse',
    errors: [],
    extension: true,
  },
  {
    path: '/api/configurar/webhook',
    summary: "Points the account's webhook at a URL, keeping its signing secret (fecr extension, not in SERVICE-SPEC)",
    request: 'WebhookBody',
    response: 'WebhookConfigResponse',
    errors: [400],
    extension: true,
  },
  {
    path: '/api/consultar/emisores',
    summary: "The account's issuers, records without secrets (fecr extension, not in SERVICE-SPEC)",
    request: 'IssuersBody',
    response: 'IssuerListResponse',
    errors: [400],
    extension: true,
  },
  {
    path: '/api/enviar/correo',
    summary:
      "Mails an accepted document to its receptor again, with its XML, PDF and MensajeHacienda: only to the document's recipients and the addresses the operator registered for the account, within the account's and the document's limits (fecr extension, not in SERVICE-SPEC)",
    request: 'EmailBody',
    response: 'MailStatusResponse',
    errors: [400, 404, 429],
    extension: true,
  },
  // The buyer's side (src/server/api-recibidos.ts).
  ...RECIBIDOS_ENDPOINTS,
  // The accountant's reports (src/server/api-reportes.ts).
  ...REPORTES_ENDPOINTS,
  // The archive (src/server/api-archivo.ts).
  ...ARCHIVO_ENDPOINTS,
  // Annul, replace, pay, and who references a comprobante (src/server/api-documentos.ts, issue 30).
  ...DOCUMENTOS_ENDPOINTS,
  // Contingency (src/server/api-contingencia.ts).
  ...CONTINGENCIA_ENDPOINTS,
];

/** What /api/consultar/emisores returns per issuer (src/client/backend.ts IssuerDetails): no secret field exists. */
const IssuerDetailsSchema = z.object({
  identificacion: z.string(),
  tipoIdentificacion: z.string(),
  nombre: z.string().optional(),
  nombreComercial: z.string(),
  codigoActividad: z.string(),
  sucursal: z.number().int(),
  telefono: z.string(),
  correoElectronico: z.string(),
  ubicacion: z.object({ provincia: z.string(), canton: z.string(), distrito: z.string(), barrio: z.string().optional(), direccion: z.string() }),
  ambiente: z.number().int().describe('1 production, 2 testing (sandbox)'),
  usuarioHacienda: z.string(),
  proveedorSistemas: z.string().optional(),
  registeredAt: z.string().describe('ISO 8601 instant'),
  updatedAt: z.string().describe('ISO 8601 instant'),
  certificateUntil: z.string().optional().describe("ISO 8601 instant: when the issuer's certificate (llave criptográfica) ends"),
});
const _toDetails = (s: z.output<typeof IssuerDetailsSchema>): IssuerDetails => s;
void _toDetails;

/** A mail of a document to its receptor (src/service/delivery/email.ts MailStatus). */
const MailStatusSchema = z.object({
  estado: z.enum(['pendiente', 'enviado', 'fallido']).describe('pendiente: being sent or waiting for a retry (4xx, no connection; 24 h); fallido: a 5xx answer or 24 h of failures'),
  destinatarios: z.array(z.string()),
  motivo: z.enum(['aceptado', 'reenvio']).describe('aceptado: the mail sent after the verdict; reenvio: asked again'),
  intentos: z.number().int(),
  ultimaRespuesta: z.string().nullable().describe("The SMTP server's last reply, or the connection error, or the outbox file"),
  messageId: z.string().describe('RFC 5322 Message-ID, the same for every retry of this mail'),
  creadoAt: z.string().describe('ISO 8601 instant'),
  enviadoAt: z.string().nullable().describe('ISO 8601 instant'),
});

/** One item of Hacienda's list in DetalleMensaje (src/core/xml/detalle-mensaje.ts ErrorHacienda). */
const ErrorHaciendaSchema = z.object({
  codigo: z.number().int().nullable().describe("Hacienda's code as it writes it (-408); null for a plain sentence (a signature failure)"),
  mensaje: z.string().describe("Hacienda's text, its doubled quotes and line ends undone"),
  fila: z.number().int().nullable().describe('The line in the XML the item points at (schema errors, code -1); null when Hacienda writes 0'),
  columna: z.number().int().nullable().describe('The column, likewise'),
  aviso: z.boolean().describe('A warning: the document stands'),
});

/** What /api/consultar/estado and /api/consultar/documentos return per document (src/client/backend.ts DocumentStatus). */
const DocumentStatusSchema = z.object({
  clave: z.string().describe('The 50-digit clave'),
  estado: z
    .enum(STATES)
    .describe(
      "Ours before Hacienda answers (pendiente, enviado), then Hacienda's (recibido, procesando, aceptado, rechazado, error); credenciales_invalidas (fecr's own): held, not sent, because Hacienda refused the issuer's usuarioHacienda/claveHacienda, until /api/actualizar/emisor",
    ),
  mensaje: z.number().int().nullable().describe('MensajeHacienda Mensaje once decided: 1 aceptado, 2 aceptado parcialmente, 3 rechazado'),
  detalleMensaje: z.string().nullable().describe("Hacienda's DetalleMensaje once decided"),
  errores: z
    .array(ErrorHaciendaSchema)
    .optional()
    .describe("fecr's extension: the items DetalleMensaje lists, as data ([] before the verdict or when nothing is listed)"),
  kind: z.string().describe('FE, NC or TE'),
  numeroConsecutivo: z.string().describe('20 digits'),
  fechaEmision: z.string().describe('ISO 8601 date-time'),
  totalComprobante: z.string().describe('Decimal string'),
  moneda: z.string().describe('ISO 4217 code'),
  receptorNombre: z.string().nullable(),
  createdAt: z.string().describe('ISO 8601 instant'),
  decidedAt: z.string().nullable().describe('ISO 8601 instant'),
  correo: MailStatusSchema.nullable().optional().describe("The latest mail to the receptor (null: none)"),
});
// Both ways assignable: the schema and the CLI's DocumentStatus stay the same shape.
const _toStatus = (s: z.output<typeof DocumentStatusSchema>): DocumentStatus => s;
const _fromStatus = (s: DocumentStatus): z.output<typeof DocumentStatusSchema> => s;
void _toStatus;
void _fromStatus;

const WebhookUrlSchema = z.object({ url: z.string().nullable().describe('null: no webhook') });
const WebhookConfigSchema = z.object({
  url: z.string().nullable(),
  secret: z.string().nullable().describe('The new whsec_… signing secret when the account had none (shown once), else null'),
});

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'bad_request: "Campos requeridos faltantes" with details, or a specific message (e.g. certificate problems)',
  401: 'unauthorized: "Token inválido o expirado"',
  404: 'not_found',
  409: 'conflict: the Idempotency-Key was used within 24 h with another body (the message names the key)',
  413: 'payload_too_large: body over 1 MiB',
  429: 'too_many_requests: a limit reached; Retry-After says in how many seconds to try again',
  503: 'service_unavailable: Hacienda did not answer',
};

/**
 * The body of every kind: `tipoDoc` names it, and a recibo electrónico de pago (tipoDoc "10") has payment lines
 * (ReciboPagoLinea) instead of the lines of the other kinds.
 */
function documentBodySchema(): JsonSchema {
  const body = schema(DocumentBody, 'input') as { properties: Record<string, Record<string, unknown>> };
  body.properties['tipoDoc'] = {
    ...body.properties['tipoDoc'],
    description: '"1" factura, "2" nota de débito, "3" nota de crédito, "4" tiquete, "8" factura de compra, "9" factura de exportación, "10" recibo de pago',
  };
  const lines = body.properties['detalleServicio']!;
  body.properties['detalleServicio'] = {
    ...lines,
    items: { oneOf: [lines['items'], { $ref: '#/components/schemas/ReciboPagoLinea' }] },
    description: 'The lines; those of a recibo de pago (tipoDoc "10") are ReciboPagoLinea',
  };
  return body as JsonSchema;
}

let cached: JsonSchema | undefined;

/** The OpenAPI document (built once). `serverUrl` goes into `servers` when given. */
export function buildOpenApi(opts: { serverUrl?: string; version?: string } = {}): JsonSchema {
  cached ??= build(opts.version ?? '1.0.0');
  return opts.serverUrl ? { ...cached, servers: [{ url: opts.serverUrl }] } : cached;
}

function build(version: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = {
    DocumentBody: documentBodySchema(),
    ReciboPagoLinea: schema(RepLineaInput, 'input'),
    IssuerRecord: schema(IssuerRecord, 'input'),
    IssuerLookupBody: schema(IssuerLookupBody, 'input'),
    ExoneracionBody: schema(ExoneracionBody, 'input'),
    CabysBody: schema(CabysBody, 'input'),
    FileBody: schema(FileBody, 'input'),
    TaxpayerBody: schema(TaxpayerBody, 'input'),
    SubmitResponse: schema(SubmitResponse, 'output'),
    MessageResponse: schema(MessageResponse, 'output'),
    IssuerLookupResponse: schema(dataResponse(IssuerPublicSchema), 'output'),
    ExoneracionResponse: schema(dataResponse(ExoneracionSchema), 'output'),
    CabysResponse: schema(dataResponse(z.array(CabysEntrySchema)), 'output'),
    FileResponse: schema(dataResponse(StoredFileSchema), 'output'),
    TaxpayerResponse: schema(dataResponse(TaxpayerSchema), 'output'),
    Error: schema(ErrorBodySchema, 'output'),
    // fecr extensions
    StatusBody: schema(StatusBody, 'input'),
    ListBody: schema(ListBody, 'input'),
    EmptyBody: schema(z.object({}), 'input'),
    WebhookBody: schema(WebhookBody, 'input'),
    DocumentStatus: schema(DocumentStatusSchema, 'output'),
    DocumentStatusResponse: schema(dataResponse(DocumentStatusSchema), 'output'),
    DocumentListResponse: schema(dataResponse(z.array(DocumentStatusSchema)), 'output'),
    WebhookUrlResponse: schema(dataResponse(WebhookUrlSchema), 'output'),
    WebhookConfigResponse: schema(dataResponse(WebhookConfigSchema), 'output'),
    IssuersBody: schema(IssuersBody, 'input'),
    IssuerListResponse: schema(dataResponse(z.array(IssuerDetailsSchema)), 'output'),
    EmailBody: schema(EmailBody, 'input'),
    MailStatusResponse: schema(dataResponse(MailStatusSchema), 'output'),
    ...Object.fromEntries(Object.entries(ARCHIVO_SCHEMAS).map(([k, v]: [string, z.ZodType]) => [k, schema(v, 'input')])),
    ...Object.fromEntries(Object.entries(REPORTES_SCHEMAS).map(([k, v]: [string, z.ZodType]) => [k, k.endsWith('Body') ? schema(v, 'input') : schema(dataResponse(v), 'output')])),
    ...Object.fromEntries(Object.entries(DOCUMENTOS_SCHEMAS).map(([k, v]: [string, z.ZodType]) => [k, k.endsWith('Body') ? schema(v, 'input') : schema(dataResponse(v), 'output')])),
    ...Object.fromEntries(Object.entries(CONTINGENCIA_SCHEMAS).map(([k, v]: [string, z.ZodType]) => [k, k.endsWith('Body') ? schema(v, 'input') : schema(dataResponse(v), 'output')])),
    ...Object.fromEntries(Object.entries(RECIBIDOS_SCHEMAS).map(([k, v]: [string, z.ZodType]) => [k, k.endsWith('Body') ? schema(v, 'input') : schema(dataResponse(v), 'output')])),
  };
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const paths: Record<string, unknown> = {};
  for (const e of ENDPOINTS) {
    const responses: Record<string, unknown> = {
      '200': e.binary
        ? { description: 'Success: the file', content: { [e.response]: { schema: { type: 'string', contentMediaType: e.response } } } }
        : { description: 'Success', content: { 'application/json': { schema: ref(e.response) } } },
    };
    for (const status of [...new Set([...e.errors, 401, 413])].sort((a, b) => a - b)) {
      responses[String(status)] = { description: ERROR_DESCRIPTIONS[status] ?? 'Error', content: { 'application/json': { schema: ref('Error') } } };
    }
    paths[e.path] = {
      post: {
        summary: e.summary,
        ...(e.extension ? { tags: ['fecr extensions'], 'x-fecr-extension': true } : { tags: ['SERVICE-SPEC'] }),
        operationId: e.path.replace(/^\/api\//, '').replace(/\/(\w)/g, (_, c: string) => c.toUpperCase()),
        security: [{ bearerAuth: [] }],
        ...(e.parameters ? { parameters: e.parameters } : {}),
        requestBody: { required: true, content: { 'application/json': { schema: ref(e.request) } } },
        responses,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'fecr client API',
      version,
      description:
        'Costa Rica electronic invoicing (comprobantes electrónicos v4.4): the client API of SERVICE-SPEC.md, ' +
        'plus fecr extensions beyond it (tag "fecr extensions", x-fecr-extension: true).',
    },
    tags: [
      { name: 'SERVICE-SPEC', description: 'The endpoints of SERVICE-SPEC.md' },
      { name: 'fecr extensions', description: 'Additive endpoints beyond SERVICE-SPEC.md: same authentication, tenancy and error bodies' },
    ],
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas,
    },
  };
}
