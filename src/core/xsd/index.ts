/**
 * XSD validation of v4.4 documents against the vendored official schemas, with two backends:
 * the `xmllint` binary (fast, batched in one process) and xmllint-wasm (in-process, no binary).
 */
import { el, serialize } from '../xml/canonical.js';
import { NS_DS } from '../xml/kinds.js';
import { hasXmllintBinary, XmllintBinaryValidator } from './binary.js';
import type { XsdValidator } from './types.js';
import { XmllintWasmValidator } from './wasm.js';

export type { XsdBackend, XsdError, XsdResult, XsdValidator } from './types.js';
export { SCHEMAS, SCHEMA_NAMES, isSchemaName, schemaPath, type SchemaInfo, type SchemaName } from './schemas.js';
export { XmllintBinaryValidator, hasXmllintBinary } from './binary.js';
export { XmllintWasmValidator } from './wasm.js';

export interface CreateXsdValidatorOptions {
  /** 'auto' (default): the binary when it runs, else wasm. 'binary' fails when there is no binary. */
  prefer?: 'binary' | 'wasm' | 'auto';
  /** xmllint executable (binary backend); default "xmllint". */
  binary?: string;
  /** Binary backend: start xmllint from one long-lived shell (see XmllintBinaryValidator); default false. */
  persistentShell?: boolean;
}

export function createXsdValidator(options: CreateXsdValidatorOptions = {}): XsdValidator {
  const prefer = options.prefer ?? 'auto';
  const binary = options.binary ?? 'xmllint';
  if (prefer === 'wasm') return new XmllintWasmValidator();
  if (hasXmllintBinary(binary)) return new XmllintBinaryValidator({ binary, ...(options.persistentShell ? { persistentShell: true } : {}) });
  if (prefer === 'binary') throw new Error(`the xmllint binary (${binary}) is not available; install libxml2-utils or use the wasm backend`);
  return new XmllintWasmValidator();
}

/**
 * Every v4.4 XSD requires a ds:Signature at the end of the root. To validate a document before
 * signing, this inserts a structurally valid (cryptographically meaningless) ds:Signature before
 * the closing root tag. Never send the result anywhere.
 */
export function withPlaceholderSignature(xml: string): string {
  const close = xml.lastIndexOf('</');
  if (close < 0) throw new Error('not an XML element');
  return xml.slice(0, close) + PLACEHOLDER_SIGNATURE + xml.slice(close);
}

const alg = (name: string, algorithm: string) => el(name, { Algorithm: algorithm });

export const PLACEHOLDER_SIGNATURE = serialize(
  el(
    'ds:Signature',
    { 'xmlns:ds': NS_DS, Id: 'placeholder-signature' },
    el(
      'ds:SignedInfo',
      [alg('ds:CanonicalizationMethod', 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315')],
      alg('ds:SignatureMethod', 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'),
      el('ds:Reference', { URI: '' }, alg('ds:DigestMethod', 'http://www.w3.org/2001/04/xmlenc#sha256'), el('ds:DigestValue', 'AAAA')),
    ),
    el('ds:SignatureValue', 'AAAA'),
  ),
);
