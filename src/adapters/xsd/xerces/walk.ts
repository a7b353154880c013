/**
 * A document walked as Java's validator (Xerces, XMLSchemaValidator) walks it, in document order, stopping at the
 * first error: at a start tag, the parent's content model takes the child (cvc-complex-type.2.4.*), then the root's
 * declaration (cvc-elt.1.a) and the attributes (cvc-type.3.1.1, cvc-complex-type.3.2.2, the attribute's value,
 * cvc-complex-type.4); at an end tag, the content (cvc-type.3.1.2, cvc-complex-type.2.2/2.3, the value's facets,
 * cvc-complex-type.2.4.b).
 *
 * Where Xerces reports it: its locator's line and column when the error is raised, i.e. just after the start tag for
 * the start-tag errors and just after the end tag (or the `/>` of an empty element) for the end-tag errors. Columns
 * are 1-based; lines end at LF, CR LF or CR (XML's line ends). The document is parsed by xmldom, which records
 * where each node starts; the end of a tag is found by a short scan from there.
 */
import { DOMParser } from '@xmldom/xmldom';
import { endContent, startContent, takeChild } from './content.js';
import type { ComplexTypeDef, ElementDecl, SchemaModel } from './model.js';
import { simpleValueError, Unsupported, type SimpleTypeDef } from './values.js';

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

export interface XercesError {
  message: string;
  /** Xerces' line (fila) and column (columna), 1-based. */
  line: number;
  column: number;
  /** Offset in the text where the error is reported. */
  offset: number;
  /** An opaque element (a ds:Signature, not judged here) came before the error. */
  afterSkipped: boolean;
}

interface Located extends Node {
  lineNumber?: number;
  columnNumber?: number;
}

/** The text's offsets, lines and columns, as xmldom counts them (to find nodes) and as Xerces does (to report). */
class Source {
  private readonly domLineStarts: number[] = [];
  private readonly lineStarts: number[] = [0];
  private readonly bom: boolean;

  constructor(readonly text: string) {
    // xmldom's own line pattern (sax.js position()).
    const re = /.*(?:\r\n?|\n)|.*$/g;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      this.domLineStarts.push(m.index);
      if (m[0].length === 0 || re.lastIndex >= text.length) break;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) this.lineStarts.push(i + 1);
    }
    this.bom = text.charCodeAt(0) === 0xfeff;
  }

  /** Offset of a node's first character. */
  offsetOf(n: Located): number {
    const start = n.lineNumber !== undefined ? this.domLineStarts[n.lineNumber - 1] : undefined;
    if (start === undefined || n.columnNumber === undefined) throw new Unsupported('a node without its position');
    return start + n.columnNumber - 1;
  }

  /** Xerces' line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    const column = offset - this.lineStarts[lo]! + 1 - (lo === 0 && this.bom ? 1 : 0);
    return { line: lo + 1, column };
  }

  /** Offset just after the `>` of the tag that starts at `start` (`<`), quoted attribute values skipped. */
  tagEnd(start: number): number {
    const t = this.text;
    for (let i = start + 1; i < t.length; i++) {
      const c = t[i];
      if (c === '"' || c === "'") {
        const close = t.indexOf(c, i + 1);
        if (close < 0) break;
        i = close;
      } else if (c === '>') return i + 1;
    }
    throw new Unsupported('a tag without its end');
  }

  startTagEnd(el: Element): number {
    return this.tagEnd(this.offsetOf(el as Located));
  }

  /** Offset just after the element's end tag (or after `/>`). */
  endTagEnd(el: Element): number {
    const startEnd = this.startTagEnd(el);
    if (this.text[startEnd - 2] === '/') return startEnd;
    let limit: number;
    const next = el.nextSibling as Located | null;
    if (next && next.lineNumber !== undefined) limit = this.offsetOf(next);
    else if (el.parentNode && el.parentNode.nodeType === 1) limit = this.text.lastIndexOf('</', this.endTagEnd(el.parentNode as Element) - 1);
    else limit = this.text.length;
    return this.text.lastIndexOf('>', limit - 1) + 1;
  }
}

interface Walk {
  src: Source;
  skipped: boolean;
}

class Found {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

const isSpace = (s: string) => /^[ \t\n\r]*$/.test(s);

/**
 * Xerces' first error in the document, or undefined when this walk finds none (the document is valid as far as
 * the model goes: the signature's content is not judged). Throws Unsupported where the document or the schema
 * uses what is not modelled (xsi:type, xsi:nil, a document xmldom cannot read).
 */
export function walkDocument(text: string, model: SchemaModel): XercesError | undefined {
  const src = new Source(text);
  const bad = (msg: string) => {
    throw new Unsupported(`the document does not parse: ${msg}`);
  };
  const doc = new DOMParser({ locator: {}, errorHandler: { warning: () => {}, error: bad, fatalError: bad } }).parseFromString(text, 'text/xml');
  const root = doc.documentElement;
  if (!root) throw new Unsupported('no root element');
  const w: Walk = { src, skipped: false };
  try {
    const decl = model.root;
    if (root.localName !== decl.name || (root.namespaceURI || null) !== decl.ns) {
      throw new Found(`cvc-elt.1.a: Cannot find the declaration of element '${root.tagName}'.`, src.startTagEnd(root));
    }
    element(w, root, decl);
    return undefined;
  } catch (e) {
    if (!(e instanceof Found)) throw e;
    return { message: e.message, offset: e.offset, ...src.position(e.offset), afterSkipped: w.skipped };
  }
}

function element(w: Walk, el: Element, decl: ElementDecl): void {
  const src = w.src;
  const type = decl.type;
  if (type === 'opaque') {
    w.skipped = true;
    return;
  }
  attributes(src, el, type);
  const end = (message: string) => new Found(message, src.endTagEnd(el));
  if (type.kind === 'simple' || type.simple) {
    const simple = type.kind === 'simple' ? type : type.simple!;
    let text = '';
    let sawChild = false;
    for (const n of Array.from(el.childNodes as unknown as ArrayLike<Node>)) {
      if (n.nodeType === 1) sawChild = true; // laxly assessed (xs:anyType): nothing to report inside
      else if (n.nodeType === 3 || n.nodeType === 4) text += (n as CharacterData).data;
    }
    text = text.replace(/\r\n?/g, '\n');
    if (sawChild) {
      throw end(
        type.kind === 'simple'
          ? `cvc-type.3.1.2: Element '${el.tagName}' is a simple type, so it must have no element information item [children].`
          : `cvc-complex-type.2.2: Element '${el.tagName}' must have no element [children], and the value must be valid.`,
      );
    }
    const err = simpleValueError(simple, text);
    if (err) throw end(err);
    return;
  }
  const ps = type.particles;
  if (ps.length === 0) throw new Unsupported('a complex type with empty content');
  const state = startContent();
  let sawCharacters = false;
  for (const n of Array.from(el.childNodes as unknown as ArrayLike<Node>)) {
    if (n.nodeType === 1) {
      const child = n as Element;
      const p = takeChild(ps, state, { rawname: child.tagName, localName: child.localName!, ns: child.namespaceURI || null });
      if (typeof p === 'string') throw new Found(p, src.startTagEnd(child));
      element(w, child, p.decl);
    } else if ((n.nodeType === 3 || n.nodeType === 4) && !isSpace((n as CharacterData).data)) sawCharacters = true;
  }
  if (sawCharacters) throw end(`cvc-complex-type.2.3: Element '${el.tagName}' cannot have character [children], because the type's content type is element-only.`);
  const incomplete = endContent(ps, state, el.tagName);
  if (incomplete) throw end(incomplete);
}

/** XMLSchemaValidator.processAttributes, then the required attributes (addDefaultAttributes). */
function attributes(src: Source, el: Element, type: SimpleTypeDef | ComplexTypeDef): void {
  const at = () => src.startTagEnd(el);
  const attrs = Array.from(el.attributes as unknown as ArrayLike<Attr>);
  for (const a of attrs) {
    if (a.namespaceURI === XSI) {
      if (a.localName === 'type' || a.localName === 'nil') throw new Unsupported(`xsi:${a.localName}`);
      if (a.localName === 'schemaLocation' || a.localName === 'noNamespaceSchemaLocation') continue;
    }
    if (a.name === 'xmlns' || a.name.startsWith('xmlns:')) continue;
    if (type.kind === 'simple') {
      throw new Found(
        `cvc-type.3.1.1: Element '${el.tagName}' is a simple type, so it cannot have attributes, excepting those whose namespace name is identical to 'http://www.w3.org/2001/XMLSchema-instance' and whose [local name] is one of 'type', 'nil', 'schemaLocation' or 'noNamespaceSchemaLocation'. However, the attribute, '${a.name}' was found.`,
        at(),
      );
    }
    const decl = a.namespaceURI ? undefined : type.attributes.find((d) => d.name === a.localName);
    if (!decl) throw new Found(`cvc-complex-type.3.2.2: Attribute '${a.name}' is not allowed to appear in element '${el.tagName}'.`, at());
    const err = simpleValueError(decl.type, a.value);
    if (err) throw new Found(err, at());
  }
  if (type.kind === 'simple') return;
  for (const d of type.attributes) {
    if (d.required && !attrs.some((a) => !a.namespaceURI && a.localName === d.name)) {
      throw new Found(`cvc-complex-type.4: Attribute '${d.name}' must appear on element '${el.tagName}'.`, at());
    }
  }
}
