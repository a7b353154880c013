/**
 * The signed document as an @xmldom/xmldom tree for verification: a strict well-formed parse (with an index
 * that spares xmldom one backward scan of the source per element name), and the few DOM walks the checks use.
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
        normalizeLineEndings: (source: string) => (closeTags.source = normalizeLineEndings(source)),
      } as ConstructorParameters<typeof DOMParser>[0]).parseFromString(xml, 'text/xml'),
    );
  } catch (e) {
    return `not well-formed XML: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (errors.length > 0) return `not well-formed XML: ${errors[0]}`;
  if (!doc || !doc.documentElement) return 'not well-formed XML: no root element';
  return doc;
}

/** xmldom's own line-end normalization (XML 1.1 §2.11, as @xmldom/xmldom 0.8 applies it), which it does not export. */
function normalizeLineEndings(input: string): string {
  return input.replace(/\r[\n\u0085]/g, '\n').replace(/[\r\u0085\u2028]/g, '\n');
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
