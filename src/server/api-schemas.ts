/**
 * zod schemas of the client API's small request bodies and of every response body. The app validates with
 * them and `/openapi.json` is generated from them (with the core's DocumentBody and IssuerRecord), so the
 * contract and the code cannot drift apart. Request bodies refuse keys they do not name (a 400 finding with the
 * closest known name), so a misspelt field is never dropped in silence.
 */
import { z } from 'zod';
import { strictObject } from '../core/input/unknown-keys.js';
import { CLAVE_PATTERN } from '../core/clave.js';

const required = (what: string) => ({ error: (iss: { input: unknown }) => (iss.input === undefined ? 'is required' : `must be ${what}`) });

/** `/api/consultar/emisor` */
export const IssuerLookupBody = strictObject({
  identificacion: z
    .union([z.number().int().positive(), z.string().trim().regex(/^\d{9,12}$/, 'must be 9 to 12 digits')], required('a number'))
    .transform(String)
    .describe('Identification number of the registered issuer'),
});

/** `/api/hacienda/exoneracion` */
export const ExoneracionBody = strictObject({
  exoneracion: z.string(required('a string')).trim().min(1, 'is required').describe('Number of the exoneration document, e.g. AL-00020402-24'),
});

/** `/api/hacienda/cabys` */
export const CabysBody = strictObject({
  name: z.string(required('a string')).trim().min(1, 'is required').describe('Search term'),
  impuesto: z.boolean('must be a boolean').optional().describe("fecr extension: also return each code's IVA rate"),
});

/** `/api/consultar/archivo` */
export const FileBody = strictObject({
  claveHacienda: z.string(required('a string')).trim().min(1, 'is required').describe('The 50-digit clave of the document'),
  fileType: z
    .string(required('a string'))
    .trim()
    .optional()
    .describe('XML (default: the signed comprobante), PDF (representación gráfica) or RESPUESTA (MensajeHacienda); case-insensitive'),
});

/** `/api/hacienda/identificacion` */
export const TaxpayerBody = strictObject({
  identificacion: z
    .union([z.string().trim().min(1, 'is required'), z.number().int().positive()], required('a string'))
    .transform(String)
    .describe('Identification number, digits only'),
  actividades: z.boolean('must be a boolean').optional().describe('fecr extension: also return the active economic activities'),
  detalle: z.boolean('must be a boolean').optional().describe('fecr extension: also return the régimen, the situación and the active economic activities'),
});

// --- Responses ----------------------------------------------------------------------------------------

export const ErrorBodySchema = z.object({
  error: z.string().describe('bad_request | unauthorized | not_found | payload_too_large | service_unavailable | internal_error'),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe('Validation findings (additive)'),
});

export const SubmitResponse = z.object({
  status: z.literal('success'),
  message: z.string(),
  clave: z.string().regex(CLAVE_PATTERN),
});

export const MessageResponse = z.object({ status: z.literal('success'), message: z.string() });

export const IssuerPublicSchema = z.object({
  identificacion: z.number(),
  tipoIdentificacion: z.number(),
  nombreComercial: z.string(),
  correoElectronico: z.string(),
  telefono: z.string(),
  ambiente: z.number(),
});

export const ExoneracionSchema = z.object({
  numeroDocumento: z.string(),
  estado: z.enum(['vigente', 'vencido']),
  porcentajeExoneracion: z.number(),
  fechaVencimiento: z.string().describe('ISO 8601 date-time'),
});

export const CabysEntrySchema = z.object({
  codigo: z.string(),
  descripcion: z.string(),
  impuesto: z
    .number()
    .int()
    .optional()
    .describe('fecr extension, only when the request asks for it: the IVA rate of the code, an integer percent (13, 4, 2, 1 or 0)'),
});

export const TaxpayerSchema = z.object({
  nombre: z.string(),
  tipoIdentificacion: z.string().describe('Two-digit code as in Receiver'),
  identificacion: z.string(),
  actividades: z
    .array(z.object({ codigo: z.string(), descripcion: z.string(), ciiu3: z.array(z.string()).optional() }))
    .optional()
    .describe('fecr extension, only when the request asks for it: active economic activities (codigo as Hacienda lists it, CIIU-4 e.g. 6201.0; ciiu3 the code(s) of the former catalogue it replaced)'),
  regimen: z
    .object({ codigo: z.number().int(), descripcion: z.string() })
    .optional()
    .describe('fecr extension, only with detalle: the tax régimen, as Hacienda names it (1 Régimen general, …)'),
  situacion: z
    .object({ estado: z.string(), moroso: z.string(), omiso: z.string(), administracionTributaria: z.string() })
    .optional()
    .describe('fecr extension, only with detalle: standing in the registry (estado "Inscrito", …; moroso and omiso "SI" or "NO")'),
});

export const StoredFileSchema = z.object({
  claveHacienda: z.string().regex(CLAVE_PATTERN),
  fileType: z.enum(['XML', 'PDF', 'RESPUESTA']),
  encodedFile: z.string().describe('Base64 of the file'),
});

export const dataResponse = <T extends z.ZodType>(data: T) => z.object({ status: z.literal('success'), data });

/** First finding per path of a zod error, as `{path, message}`. */
export { findingsFromZod } from '../core/input/findings.js';
