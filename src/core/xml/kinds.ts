/**
 * Metadata of the v4.4 documents: root element, namespace, XSD and tipo de comprobante
 * (NOTES §1.1). Shared by the builder, the parser and the XSD validator.
 */
import { TIPO_COMPROBANTE, type DocumentKind } from '../model.js';

export const NS_BASE_V44 = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/';
export const NS_BASE_V43 = 'https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.3/';
export const NS_BASE_V42 = 'https://tribunet.hacienda.go.cr/docs/esquemas/2017/v4.2/';
export const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';

/** Names of the XSDs the validator knows (see src/core/xsd/schemas.ts). */
export type SchemaName = 'FE' | 'NC' | 'ND' | 'TE' | 'FEE' | 'FEC' | 'REP' | 'MH' | 'MR';

/**
 * The set of v4.4 XSDs in force, as a folder of `schemas/xsd/`: the April-2026 revision, mandatory since
 * 2026-11-01 (its deltas: schemas/xsd/SOURCES.md). A new revision is dropped in as schemas/xsd/<year>/v4.4/ with
 * the official file names (each imports `../../xmldsig-core-schema.xsd`), and this constant names it.
 */
export const SCHEMA_SET = '2026/v4.4';

export interface KindInfo {
  kind: DocumentKind;
  /** Root element name, e.g. "FacturaElectronica". */
  rootName: string;
  /** Default namespace of the root, e.g. ".../v4.4/facturaElectronica". */
  namespace: string;
  /** XSD path relative to `schemas/xsd/`. */
  xsdFile: string;
  /** Schema name for the XsdValidator. */
  schema: SchemaName;
  /** Tipo de comprobante code (consecutivo positions 9-10). */
  tipoComprobante: string;
}

function info(kind: DocumentKind, rootName: string, xsdFile: string): KindInfo {
  const lowerCamel = rootName.charAt(0).toLowerCase() + rootName.slice(1);
  return { kind, rootName, namespace: NS_BASE_V44 + lowerCamel, xsdFile, schema: kind, tipoComprobante: TIPO_COMPROBANTE[kind] };
}

export const KINDS: Readonly<Record<DocumentKind, KindInfo>> = {
  FE: info('FE', 'FacturaElectronica', `${SCHEMA_SET}/FacturaElectronica_V4.4.xsd`),
  ND: info('ND', 'NotaDebitoElectronica', `${SCHEMA_SET}/NotaDebitoElectronica_V4.4.xsd`),
  NC: info('NC', 'NotaCreditoElectronica', `${SCHEMA_SET}/NotaCreditoElectronica_V4.4.xsd`),
  TE: info('TE', 'TiqueteElectronico', `${SCHEMA_SET}/TiqueteElectronico_V4.4.xsd`),
  FEC: info('FEC', 'FacturaElectronicaCompra', `${SCHEMA_SET}/FacturaElectronicaCompra_V4.4.xsd`),
  FEE: info('FEE', 'FacturaElectronicaExportacion', `${SCHEMA_SET}/FacturaElectronicaExportacion_V4.4.xsd`),
  REP: info('REP', 'ReciboElectronicoPago', `${SCHEMA_SET}/ReciboElectronicoPago_V4.4.xsd`),
};

export const MENSAJE_HACIENDA = { rootName: 'MensajeHacienda', namespace: NS_BASE_V44 + 'mensajeHacienda' } as const;
export const MENSAJE_RECEPTOR = { rootName: 'MensajeReceptor', namespace: NS_BASE_V44 + 'mensajeReceptor' } as const;

/** The kind whose root element has this name, if any. */
export function kindOfRoot(rootName: string): DocumentKind | undefined {
  for (const k of Object.values(KINDS)) if (k.rootName === rootName) return k.kind;
  return undefined;
}
