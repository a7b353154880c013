/**
 * A tiny XML element tree and its serializer, whose output is already in Canonical XML form
 * (exclusive and inclusive C14N agree on it as long as namespaces are declared where used):
 * no XML declaration inside, attributes sorted (namespace declarations first), no empty-element
 * tags, text and attribute values escaped per C14N. Because our documents are serialized
 * canonically by construction, their digests can be taken over the bytes we wrote, with no
 * re-parse (see sign/xades.ts).
 */

export interface XmlElement {
  name: string;
  /** Namespace declarations and attributes; `xmlns` / `xmlns:p` keys are declarations. */
  attrs?: Record<string, string>;
  children?: XmlNode[];
}
export type XmlNode = XmlElement | string;

/** Builds an element; `undefined`/`null`/`false` children are dropped so optional parts read naturally. */
export function el(
  name: string,
  attrsOrChildren?: Record<string, string | undefined> | XmlChild[] | XmlElement | string,
  ...rest: XmlChild[]
): XmlElement {
  let attrs: Record<string, string> | undefined;
  let children: XmlChild[];
  if (typeof attrsOrChildren === 'string' || Array.isArray(attrsOrChildren) || isElement(attrsOrChildren)) {
    children = [attrsOrChildren, ...rest];
  } else {
    if (attrsOrChildren) {
      attrs = {};
      for (const [k, v] of Object.entries(attrsOrChildren)) if (v !== undefined) attrs[k] = v;
    }
    children = rest;
  }
  return { name, attrs, children: flatten(children) };
}

function isElement(x: unknown): x is XmlElement {
  // Attribute values are strings, so an object whose `children` is an array is an element.
  return typeof x === 'object' && x !== null && Array.isArray((x as { children?: unknown }).children);
}

export type XmlChild = XmlNode | XmlChild[] | undefined | null | false;

function flatten(children: XmlChild[], out: XmlNode[] = []): XmlNode[] {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) flatten(c, out);
    else out.push(c);
  }
  return out;
}

/** C14N text escaping: & < > and CR. */
export function escapeText(s: string): string {
  return s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));
}

/** C14N attribute escaping: & < " TAB LF CR. */
export function escapeAttr(s: string): string {
  return s.replace(/[&<"\t\n\r]/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '"' ? '&quot;' : c === '\t' ? '&#x9;' : c === '\n' ? '&#xA;' : '&#xD;',
  );
}

/**
 * Characters XML 1.0 cannot carry at all (its production Char): C0 controls other than TAB, LF and CR, U+FFFE,
 * U+FFFF and lone surrogates (UTF-16 halves without their pair). Input containing them is rejected by the input
 * schema (src/core/input/schema.ts); the writers below refuse them too, as a last line of defence.
 */
export const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The code point (a UTF-16 unit for a lone surrogate) of the first character XML cannot carry, or undefined. */
export function forbiddenXmlChar(s: string): number | undefined {
  const m = INVALID_XML_CHARS.exec(s);
  return m ? m[0].charCodeAt(0) : undefined;
}

/** `contains U+0007, not allowed in XML`: the finding's message for such a character. */
export function forbiddenXmlCharMessage(codePoint: number): string {
  return `contains U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}, not allowed in XML`;
}

/** Thrown by the writers when a text or attribute value holds a character XML cannot carry. */
export class XmlCharError extends Error {
  constructor(
    /** Element names from the root's child down (`Emisor/Nombre`), `@name` for an attribute. */
    readonly where: string,
    readonly codePoint: number,
  ) {
    super(`${where}: ${forbiddenXmlCharMessage(codePoint)}`);
    this.name = 'XmlCharError';
  }
}

function checkChars(value: string, where: () => string): void {
  const cp = forbiddenXmlChar(value);
  if (cp !== undefined) throw new XmlCharError(where(), cp);
}

function attrOrder(a: string, b: string): number {
  // C14N: namespace declarations first (default namespace first, then by prefix), then attributes.
  // Our attributes carry no namespace prefix, so ordering by local name is the C14N order.
  const an = a === 'xmlns' || a.startsWith('xmlns:');
  const bn = b === 'xmlns' || b.startsWith('xmlns:');
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Serializes an element tree canonically. */
export function serialize(node: XmlNode): string {
  const out: string[] = [];
  write(node, out, undefined);
  return out.join('');
}

/** Where a value sits, for XmlCharError: the element names below the root, `/`-separated. */
interface Trail {
  name: string;
  up: Trail | undefined;
}

function trailText(t: Trail | undefined, attr?: string): string {
  const names: string[] = [];
  for (let at = t; at; at = at.up) names.unshift(at.name);
  if (names.length > 1) names.shift(); // the root is implied
  return names.join('/') + (attr ? `@${attr}` : '');
}

function write(node: XmlNode, out: string[], up: Trail | undefined): void {
  if (typeof node === 'string') {
    checkChars(node, () => trailText(up));
    out.push(escapeText(node));
    return;
  }
  const here: Trail = { name: node.name, up };
  writeStart(node.name, node.attrs, out, here);
  if (node.children) for (const c of node.children) write(c, out, here);
  out.push('</', node.name, '>');
}

function writeStart(name: string, attrs: Record<string, string> | undefined, out: string[], here: Trail): void {
  out.push('<', name);
  if (attrs) {
    const keys = Object.keys(attrs).sort(attrOrder);
    for (const k of keys) {
      const v = attrs[k]!;
      checkChars(v, () => trailText(here, k));
      out.push(' ', k, '="', escapeAttr(v), '"');
    }
  }
  out.push('>');
}

/**
 * Serializes a tree of prefixed elements as Exclusive XML Canonicalization would render it:
 * each prefix's `xmlns:p` declaration is written on the first element that uses the prefix and whose
 * output ancestors have not rendered it. `namespaces` maps prefixes to URIs; `rendered` lists those
 * already rendered by output ancestors (empty when `node` is the apex of a canonicalized subtree).
 * Element names only carry prefixes; attributes are unprefixed.
 */
export function serializeExclusive(
  node: XmlNode,
  namespaces: Readonly<Record<string, string>>,
  rendered: Readonly<Record<string, string>> = {},
): string {
  const out: string[] = [];
  writeExclusive(node, namespaces, rendered, out, undefined);
  return out.join('');
}

function writeExclusive(
  node: XmlNode,
  ns: Readonly<Record<string, string>>,
  rendered: Readonly<Record<string, string>>,
  out: string[],
  up: Trail | undefined,
): void {
  if (typeof node === 'string') {
    checkChars(node, () => trailText(up));
    out.push(escapeText(node));
    return;
  }
  const here: Trail = { name: node.name, up };
  const colon = node.name.indexOf(':');
  let attrs = node.attrs;
  let inScope = rendered;
  if (colon > 0) {
    const prefix = node.name.slice(0, colon);
    const uri = ns[prefix];
    if (uri === undefined) throw new Error(`no namespace URI for prefix ${prefix}`);
    if (rendered[prefix] !== uri) {
      attrs = { ...attrs, [`xmlns:${prefix}`]: uri };
      inScope = { ...rendered, [prefix]: uri };
    }
  }
  writeStart(node.name, attrs, out, here);
  if (node.children) for (const c of node.children) writeExclusive(c, ns, inScope, out, here);
  out.push('</', node.name, '>');
}
