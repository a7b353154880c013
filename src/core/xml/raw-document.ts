/**
 * The generic layer of parsing received XML with fast-xml-parser 5: XML text (or a W3C-like DOM) →
 * {rootName, namespace, body} with local names as keys, and a Reader over it whose accessors report paths.
 * Every value stays a string: numbers are never parsed (claves keep their leading zeros, money
 * never becomes a float). Namespace prefixes are accepted on any element (`<fe:Clave>`); names
 * are matched by local name. Entities (the five XML ones and numeric references) are decoded
 * here in one pass, CDATA is honoured, and DOCTYPE is refused (no entity expansion attacks).
 */
import { XMLParser } from 'fast-xml-parser';
import { escapeText } from './canonical.js';
import { codeTable } from '../code-table.js';

export class XmlParseError extends Error {
  override name = 'XmlParseError';
}

export type Node = string | NodeObject | Node[];
export interface NodeObject {
  [key: string]: Node;
}

const ENTITY_RE = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(lt|gt|amp|quot|apos));/g;
const NAMED: Record<string, string> = codeTable({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" });

/** XML end-of-line normalization of literal CRs, then entity decoding (`&#xD;` stays a CR). */
function decodeEntities(raw: string): string {
  const s = raw.includes('\r') ? raw.replace(/\r\n?/g, '\n') : raw;
  if (!s.includes('&')) return s;
  return s.replace(ENTITY_RE, (whole, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
    if (name) return NAMED[name]!;
    const cp = hex !== undefined ? parseInt(hex, 16) : parseInt(decimal!, 10);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
  });
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  tagValueProcessor: (_name: string, value: string) => decodeEntities(value),
  attributeValueProcessor: (_name: string, value: string) => decodeEntities(value),
});

function localName(key: string): string {
  const i = key.indexOf(':');
  return i < 0 ? key : key.slice(i + 1);
}

/** Re-keys an object tree by local names (attributes and #text kept), merging same-named siblings. */
function stripPrefixes(node: Node): Node {
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return node.map(stripPrefixes);
  const out: NodeObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('@_xmlns')) continue;
    const name = key.startsWith('@_') ? '@_' + localName(key.slice(2)) : key === '#text' ? key : localName(key);
    const v = stripPrefixes(value);
    const prev = out[name];
    if (prev === undefined) out[name] = v;
    else out[name] = ([] as Node[]).concat(prev, v);
  }
  return out;
}

export interface RawDocument {
  rootName: string;
  namespace: string | undefined;
  body: NodeObject;
}

export function parseXmlRoot(xml: string): RawDocument {
  if (/<!DOCTYPE/i.test(xml)) throw new XmlParseError('DOCTYPE declarations are not allowed');
  // CDATA → escaped text, so every text node goes through the same entity decoding.
  const text = xml.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_m, c: string) => escapeText(c));
  let tree: NodeObject;
  try {
    tree = parser.parse(text, true) as NodeObject;
  } catch (err) {
    throw new XmlParseError(`not well-formed XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const roots = Object.keys(tree).filter((k) => !k.startsWith('?') && !k.startsWith('#'));
  if (roots.length !== 1) throw new XmlParseError('expected exactly one root element');
  const rootKey = roots[0]!;
  const root = tree[rootKey];
  if (Array.isArray(root)) throw new XmlParseError('expected exactly one root element');
  const prefix = rootKey.includes(':') ? rootKey.slice(0, rootKey.indexOf(':')) : undefined;
  let namespace: string | undefined;
  let body: NodeObject = {};
  if (typeof root === 'object') {
    const ns = root[prefix ? `@_xmlns:${prefix}` : '@_xmlns'];
    namespace = typeof ns === 'string' ? ns : undefined;
    body = stripPrefixes(root) as NodeObject;
  }
  return { rootName: localName(rootKey), namespace, body };
}

/** The DOM interfaces `rawFromDom` reads (structural, so any W3C-like DOM such as @xmldom/xmldom fits). */
export interface DomNodeLike {
  nodeType: number;
  nodeName: string;
  localName?: string | null;
  namespaceURI?: string | null;
  nodeValue?: string | null;
  firstChild: DomNodeLike | null;
  nextSibling: DomNodeLike | null;
  attributes?: { length: number; [index: number]: { name: string; value: string } } | null;
}

/**
 * The same tree `parseXmlRoot` builds, from an already parsed DOM (element or document): one parse of a
 * received document can then serve both the signature verification (which needs a DOM) and the typed
 * views below. The DOM must come from a parser that decodes entities and CDATA (xmldom does) and the
 * text must have passed a well-formedness check; DOCTYPE is refused here too. As with fast-xml-parser,
 * each run of text between child elements is trimmed (comments and processing instructions are dropped and
 * do not split a run), runs are concatenated, attributes are keyed `@_localName` without `xmlns` declarations.
 */
export function rawFromDom(node: DomNodeLike): RawDocument {
  let root: DomNodeLike | null = node;
  if (node.nodeType === 9) {
    root = null;
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 10) throw new XmlParseError('DOCTYPE declarations are not allowed');
      if (c.nodeType === 1) {
        if (root) throw new XmlParseError('expected exactly one root element');
        root = c;
      }
    }
    if (!root) throw new XmlParseError('expected exactly one root element');
  }
  const body = domElementValue(root);
  return {
    rootName: localName(root.nodeName),
    namespace: root.namespaceURI ?? undefined,
    body: typeof body === 'string' ? {} : (body as NodeObject),
  };
}

function domElementValue(e: DomNodeLike): Node {
  let out: NodeObject | undefined;
  const attrs = e.attributes;
  if (attrs) {
    for (let i = 0; i < attrs.length; i++) {
      const a = attrs[i]!;
      if (a.name.startsWith('xmlns')) continue;
      (out ??= {})['@_' + localName(a.name)] = a.value.trim();
    }
  }
  let text = '';
  let run = '';
  for (let c = e.firstChild; c; c = c.nextSibling) {
    const t = c.nodeType;
    if (t === 3 || t === 4) {
      run += c.nodeValue ?? '';
      continue;
    }
    if (t !== 1) continue; // comments and processing instructions do not split the text
    if (run !== '') {
      text += run.trim();
      run = '';
    }
    const name = localName(c.nodeName);
    const v = domElementValue(c);
    out ??= {};
    const prev = out[name];
    if (prev === undefined) out[name] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[name] = [prev, v];
  }
  if (run !== '') text += run.trim();
  if (!out) return text;
  if (text !== '') out['#text'] = text;
  return out;
}

function textOf(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (typeof node === 'string') return node;
  if (Array.isArray(node)) return textOf(node[0]);
  const t = node['#text'];
  return typeof t === 'string' ? t : t === undefined ? '' : textOf(t);
}

export function list(node: Node | undefined): Node[] {
  if (node === undefined) return [];
  return Array.isArray(node) ? node : [node];
}

function obj(node: Node | undefined): NodeObject {
  if (node === undefined || typeof node === 'string') return {};
  if (Array.isArray(node)) return obj(node[0]);
  return node;
}

/** A view on one element's children with required/optional accessors that report paths. */
export class Reader {
  constructor(
    readonly node: NodeObject,
    readonly path: string,
  ) {}
  static of(node: Node | undefined, path: string): Reader {
    return new Reader(obj(node), path);
  }
  has(name: string): boolean {
    return this.node[name] !== undefined;
  }
  opt(name: string): string | undefined {
    return textOf(this.node[name]);
  }
  req(name: string): string {
    const v = this.opt(name);
    if (v === undefined) throw new XmlParseError(`${this.path}: missing element ${name}`);
    return v;
  }
  all(name: string): Reader[] {
    return list(this.node[name]).map((n, i, a) => Reader.of(n, a.length > 1 ? `${this.path}/${name}[${i + 1}]` : `${this.path}/${name}`));
  }
  texts(name: string): string[] {
    return list(this.node[name]).map((n) => textOf(n) ?? '');
  }
  child(name: string): Reader | undefined {
    const n = this.node[name];
    return n === undefined ? undefined : Reader.of(n, `${this.path}/${name}`);
  }
  reqChild(name: string): Reader {
    const c = this.child(name);
    if (!c) throw new XmlParseError(`${this.path}: missing element ${name}`);
    return c;
  }
}
