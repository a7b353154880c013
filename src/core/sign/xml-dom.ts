/**
 * The signed document as an @xmldom/xmldom tree for verification: a strict well-formed parse (with an index
 * that spares xmldom one backward scan of the source per element name), and the few DOM walks the checks use.
 *
 * Line ends are XML 1.0's (§2.11): CR LF and a lone CR become LF, nothing else. xmldom's default is XML 1.1's,
 * which also turns NEL (U+0085) and LINE SEPARATOR (U+2028) into LF: text a signer (fecr, xmlsec1, libxml2,
 * Hacienda's Java) canonicalised with those characters would digest differently here, and, worse, a signed LF
 * replaced by U+2028 would still verify. Every xmldom parse that verification and signing make, ours and
 * xml-crypto's, uses XML 1.0's (`withXml10LineEnds`).
 */
import { DOMParser } from '@xmldom/xmldom';
import { XMLValidator } from 'fast-xml-parser';
import { NS_DS } from './policy.js';

/**
 * Parses XML for signature verification: a strict well-formedness check (fast-xml-parser's validator),
 * then an @xmldom/xmldom tree. Returns the reason as a string when the text is not well-formed.
 */
export function parseXmlDocument(xml: string): Document | string {
  // xmldom forgives mismatched end tags and similar faults (as warnings); a signed document must be
  // well-formed, so a strict validator decides first.
  const strict = XMLValidator.validate(xml);
  if (strict !== true) return `not well-formed XML: ${strict.err.msg} (line ${strict.err.line}, column ${strict.err.col})`;
  const errors: string[] = [];
  let doc: Document;
  try {
    doc = withCloseTagIndex(() =>
      new DOMParser({
        errorHandler: {
          warning: () => undefined,
          error: (m: string) => errors.push(m),
          fatalError: (m: string) => errors.push(m),
        },
        normalizeLineEndings: (source: string) => (closeTags.source = xml10LineEnds(source)),
      } as ConstructorParameters<typeof DOMParser>[0]).parseFromString(xml, 'text/xml'),
    );
  } catch (e) {
    return `not well-formed XML: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (errors.length > 0) return `not well-formed XML: ${errors[0]}`;
  if (!doc || !doc.documentElement) return 'not well-formed XML: no root element';
  return doc;
}

/**
 * XML 1.0 end-of-line handling (§2.11): the two characters CR LF, and a CR not followed by LF, become one LF.
 * NEL, U+2028 and U+2029 are ordinary characters in XML 1.0 and stay as they are.
 */
export function xml10LineEnds(input: string): string {
  return input.indexOf('\r') < 0 ? input : input.replace(/\r\n?/g, '\n');
}

type ParseFromString = (this: DOMParser, source: string, mimeType?: string) => Document;

/**
 * Runs `fn` (synchronous) with every xmldom parser that was given no line-end option of its own applying
 * XML 1.0's: xml-crypto parses the document again in its core validation (`checkSignature`), the canonical
 * SignedInfo, the output of a transform, and the document it signs (`computeSignature`), always with xmldom's
 * default (XML 1.1).
 */
export function withXml10LineEnds<T>(fn: () => T): T {
  const proto = DOMParser.prototype as unknown as { parseFromString: ParseFromString };
  const current = proto.parseFromString; // the built-in, or an outer call's wrapper (nested calls pass through)
  proto.parseFromString = function (this: DOMParser, source: string, mimeType?: string): Document {
    const self = this as unknown as { options?: Record<string, unknown> };
    const options = self.options;
    if (options?.normalizeLineEndings) return current.call(this, source, mimeType);
    self.options = { ...options, normalizeLineEndings: xml10LineEnds };
    try {
      return current.call(this, source, mimeType);
    } finally {
      self.options = options;
    }
  };
  try {
    return fn();
  } finally {
    proto.parseFromString = current;
  }
}

/**
 * xmldom 0.8 looks, for every distinct element name, for the LAST `</name>` in the whole source
 * (`fixSelfClosed`, an HTML leniency, with `String.prototype.lastIndexOf`): one backward scan of the document
 * per element name, ≈ 40 % of parsing a 14 KB comprobante. During a parse (synchronous, nothing else runs on
 * this thread) `lastIndexOf` on the source being parsed, for a `</name>` needle, answers from an index of the
 * last position of every `</…>` built in one forward pass; any other call goes to the built-in. The answers are
 * identical: an occurrence of `</name>` at i is exactly a `</` at i whose next `>` closes `name`.
 */
const closeTags: { source: string | undefined; last: Map<string, number> | undefined } = { source: undefined, last: undefined };
const builtinLastIndexOf = String.prototype.lastIndexOf;

function indexedLastIndexOf(this: string, search: string, position?: number): number {
  const source = closeTags.source;
  if (
    source !== undefined &&
    position === undefined &&
    typeof search === 'string' &&
    search.startsWith('</') &&
    search.indexOf('>') === search.length - 1 &&
    // `this` is the primitive string in strict code; the same string as the source being parsed
    this === source
  ) {
    let last = closeTags.last;
    if (!last) {
      last = new Map();
      for (let i = source.indexOf('</'); i >= 0; i = source.indexOf('</', i + 1)) {
        const end = source.indexOf('>', i + 2);
        if (end < 0) break;
        last.set(source.slice(i, end + 1), i);
      }
      closeTags.last = last;
    }
    return last.get(search) ?? -1;
  }
  return builtinLastIndexOf.call(this, search, position);
}

function withCloseTagIndex<T>(parse: () => T): T {
  if (String.prototype.lastIndexOf !== builtinLastIndexOf) return parse(); // someone else's patch: leave it
  String.prototype.lastIndexOf = indexedLastIndexOf;
  try {
    return parse();
  } finally {
    String.prototype.lastIndexOf = builtinLastIndexOf;
    closeTags.source = undefined;
    closeTags.last = undefined;
  }
}

export function childElements(parent: Element | undefined): Element[] {
  const out: Element[] = [];
  if (!parent) return out;
  for (let c = parent.firstChild; c; c = c.nextSibling) if (c.nodeType === 1) out.push(c as Element);
  return out;
}

export function isDs(e: Element, local: string): boolean {
  return e.namespaceURI === NS_DS && e.localName === local;
}

export function firstChild(parent: Element | undefined, ns: string, local: string): Element | undefined {
  return childElements(parent).find((e) => e.namespaceURI === ns && e.localName === local);
}

export function firstDescendant(parent: Element, ns: string, local: string): Element | undefined {
  return (parent.getElementsByTagNameNS(ns, local)[0] as Element | undefined) ?? undefined;
}
