/**
 * The client API's OpenAPI 3.1 document, generated from the same zod schemas the app validates with
 * (zod 4 `z.toJSONSchema`, JSON Schema 2020-12 as OpenAPI 3.1 uses it).
 */
import { z } from 'zod';
import { DocumentBody, IssuerRecord } from '../core/input/schema.js';
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
}

const ENDPOINTS: Endpoint[] = [
  { path: '/api/enviar/items', summary: 'Submit an electronic document', request: 'DocumentBody', response: 'SubmitResponse', errors: [400] },
  { path: '/api/enviar/emisor', summary: 'Register an issuer', request: 'IssuerRecord', response: 'MessageResponse', errors: [400] },
  { path: '/api/actualizar/emisor', summary: 'Update a registered issuer (creates it when unknown)', request: 'IssuerRecord', response: 'MessageResponse', errors: [400] },
  { path: '/api/consultar/emisor', summary: 'Look up an issuer', request: 'IssuerLookupBody', response: 'IssuerLookupResponse', errors: [400, 404] },
  { path: '/api/hacienda/exoneracion', summary: 'Validate an exoneration document with Hacienda', request: 'ExoneracionBody', response: 'ExoneracionResponse', errors: [400, 404, 503] },
  { path: '/api/hacienda/cabys', summary: 'Search CABYS codes by name', request: 'CabysBody', response: 'CabysResponse', errors: [400, 503] },
  { path: '/api/consultar/archivo', summary: 'Download the file of a sent document', request: 'FileBody', response: 'FileResponse', errors: [400, 404] },
  { path: '/api/hacienda/identificacion', summary: 'Look up a taxpayer', request: 'TaxpayerBody', response: 'TaxpayerResponse', errors: [400, 404, 503] },
];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'bad_request: "Campos requeridos faltantes" with details, or a specific message (e.g. certificate problems)',
  401: 'unauthorized: "Token inválido o expirado"',
  404: 'not_found',
  413: 'payload_too_large: body over 1 MiB',
  503: 'service_unavailable: Hacienda did not answer',
};

let cached: JsonSchema | undefined;

/** The OpenAPI document (built once). `serverUrl` goes into `servers` when given. */
export function buildOpenApi(opts: { serverUrl?: string; version?: string } = {}): JsonSchema {
  cached ??= build(opts.version ?? '1.0.0');
  return opts.serverUrl ? { ...cached, servers: [{ url: opts.serverUrl }] } : cached;
}

function build(version: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = {
    DocumentBody: schema(DocumentBody, 'input'),
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
  };
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const paths: Record<string, unknown> = {};
  for (const e of ENDPOINTS) {
    const responses: Record<string, unknown> = {
      '200': { description: 'Success', content: { 'application/json': { schema: ref(e.response) } } },
    };
    for (const status of [...new Set([...e.errors, 401, 413])].sort((a, b) => a - b)) {
      responses[String(status)] = { description: ERROR_DESCRIPTIONS[status] ?? 'Error', content: { 'application/json': { schema: ref('Error') } } };
    }
    paths[e.path] = {
      post: {
        summary: e.summary,
        operationId: e.path.replace(/^\/api\//, '').replace(/\/(\w)/g, (_, c: string) => c.toUpperCase()),
        security: [{ bearerAuth: [] }],
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
      description: 'Costa Rica electronic invoicing (comprobantes electrónicos v4.4): the client API of SERVICE-SPEC.md.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas,
    },
  };
}
