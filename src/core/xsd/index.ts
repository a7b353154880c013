/**
 * XSD validation, as core knows it: the validator's interface, the schemas' names and paths, and the placeholder
 * signature that lets an unsigned document be validated. The validators themselves (the xmllint binary, xmllint-wasm)
 * are adapters: src/adapters/xsd/.
 */
import { el, serialize } from '../xml/canonical.js';
import { NS_DS } from '../xml/kinds.js';

export type { XsdBackend, XsdError, XsdResult, XsdValidator } from './types.js';
export { SCHEMAS, SCHEMA_NAMES, schemaPath, type SchemaInfo, type SchemaName } from './schemas.js';

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
