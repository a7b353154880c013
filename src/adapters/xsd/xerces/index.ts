/**
 * A schema error in Hacienda's words. Hacienda validates a received comprobante with Java's validator (Xerces, as
 * in the JDK's javax.xml.validation) and lists only the first error, with Xerces' message and the line and column
 * of Xerces' locator (NOTES §6.3). fecr validates with libxml2 (xmllint), whose words and positions differ; when
 * libxml2 finds a document invalid, this walks it again as Xerces does (walk.ts, over the XSD read by model.ts)
 * and returns Xerces' first error. Nothing here runs for a valid document.
 *
 * Falls back to libxml2's own message (its line, column 0) where the emulation does not reach: an error inside
 * the ds:Signature (the xmldsig schema is not modelled), a document xmldom does not read, xsi:type or xsi:nil.
 */
import type { SchemaName } from '../../../core/xml/kinds.js';
import type { XsdError, XsdValidator } from '../../../core/xsd/types.js';
import { schemaModel } from './model.js';
import { walkDocument } from './walk.js';

export interface XercesFirstError {
  message: string;
  /** Line (Hacienda's "fila"), 1-based; 0 when unknown. */
  fila: number;
  /** Column (Hacienda's "columna"), 1-based; 0 when unknown. */
  columna: number;
  /** False when this is libxml2's message, not Xerces'. */
  xerces: boolean;
}

const DS = 'http://www.w3.org/2000/09/xmldsig#';

/** libxml2's error concerns the content of a ds:Signature (not the Signature's place in the document). */
function insideSignature(message: string): boolean {
  if (!message.startsWith(`Element '{${DS}}`)) return false;
  return !message.startsWith(`Element '{${DS}}Signature': This element is not expected`);
}

/**
 * Xerces' first error for a document the XSD validator found invalid, given the validator's first error
 * (`first`, as the xmllint adapters report it).
 */
export function xercesError(xml: string, schema: SchemaName, first: XsdError): XercesFirstError {
  const fallback: XercesFirstError = { message: first.message, fila: first.line ?? 0, columna: 0, xerces: false };
  if (first.message.startsWith('XML parser error')) return fallback;
  try {
    const found = walkDocument(xml, schemaModel(schema));
    if (!found) return fallback;
    if (found.afterSkipped && insideSignature(first.message)) return fallback;
    return { message: found.message, fila: found.line, columna: found.column, xerces: true };
  } catch {
    // Unsupported (a construct not modelled), or a flaw of this emulation: the validator's own words are still a
    // true answer, so they are given rather than none.
    return fallback;
  }
}

/**
 * Validates `xml` against `schema` with `validator` and, when it is invalid, returns its first error in Xerces'
 * words and position (undefined when it is valid). For `fecr document validate` and the emulator alike.
 */
export async function xercesFirstError(xml: string, schema: SchemaName, validator: XsdValidator): Promise<XercesFirstError | undefined> {
  const [r] = await validator.validate(xml, schema);
  if (!r || r.valid) return undefined;
  return xercesError(xml, schema, r.errors[0] ?? { message: 'The document fails to validate' });
}
