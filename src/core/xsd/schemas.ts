/**
 * The vendored XSDs (schemas/xsd/, see schemas/xsd/SOURCES.md) and where to find them.
 * The folder is found from the package root (core/package-root.ts): from src/ (tsx, vitest) and from dist/ alike.
 * Reading them is the adapters' (src/adapters/xsd/): core only names them.
 */
import { fileURLToPath } from 'node:url';
import { packageUrl } from '../package-root.js';
import { KINDS, NS_BASE_V44, SCHEMA_SET, type SchemaName } from '../xml/kinds.js';

export type { SchemaName } from '../xml/kinds.js';

export const SCHEMAS_DIR_URL = packageUrl('schemas/xsd/');
export const SCHEMAS_DIR = fileURLToPath(SCHEMAS_DIR_URL);

/** The xmldsig schema every v4.4 XSD imports as `../../xmldsig-core-schema.xsd`. */
export const XMLDSIG_XSD = 'xmldsig-core-schema.xsd';

export interface SchemaInfo {
  name: SchemaName;
  /** Path relative to schemas/xsd/. */
  file: string;
  rootName: string;
  namespace: string;
}

const MH = 'MensajeHacienda';
const MR = 'MensajeReceptor';

export const SCHEMAS: Readonly<Record<SchemaName, SchemaInfo>> = {
  FE: fromKind('FE'),
  NC: fromKind('NC'),
  ND: fromKind('ND'),
  TE: fromKind('TE'),
  FEE: fromKind('FEE'),
  FEC: fromKind('FEC'),
  REP: fromKind('REP'),
  MH: { name: 'MH', file: `${SCHEMA_SET}/${MH}_V4.4.xsd`, rootName: MH, namespace: NS_BASE_V44 + 'mensajeHacienda' },
  MR: { name: 'MR', file: `${SCHEMA_SET}/${MR}_V4.4.xsd`, rootName: MR, namespace: NS_BASE_V44 + 'mensajeReceptor' },
};

function fromKind(kind: keyof typeof KINDS): SchemaInfo {
  const k = KINDS[kind];
  return { name: kind, file: k.xsdFile, rootName: k.rootName, namespace: k.namespace };
}

export const SCHEMA_NAMES = Object.keys(SCHEMAS) as SchemaName[];

/** Absolute file path of a schema. */
export function schemaPath(name: SchemaName): string {
  return fileURLToPath(new URL(SCHEMAS[name].file, SCHEMAS_DIR_URL));
}


