/**
 * A v4.4 XSD read into what Java's validator (Xerces) works with: the global element, each element's
 * declaration with its content model (a sequence of element particles with their minOccurs/maxOccurs), its
 * attributes, and its simple types with every facet resolved. Types get Xerces' names (`ClaveType`, `decimal`,
 * `#AnonType_NombreEmisorType`: "#AnonType_" and the names of the declarations around an anonymous type, as
 * XSDSimpleTypeTraverser.genAnonTypeName makes them), since Xerces prints them.
 *
 * Only what the v4.4 XSDs use is modelled: sequences of elements, simpleContent extensions with attributes,
 * restrictions of string, decimal, integer, positiveInteger and dateTime. The xmldsig part (`ref="ds:Signature"`)
 * is opaque: the document's signature is not judged here. Anything else throws Unsupported.
 */
import { readFileSync } from 'node:fs';
import { DOMParser } from '@xmldom/xmldom';
import { SCHEMAS, SCHEMAS_DIR_URL, type SchemaName } from '../../../core/xsd/schemas.js';
import { canonicalXDecimal, parseXDecimal, Unsupported, xsdPattern, type Datatype, type SimpleTypeDef, type XDecimal } from './values.js';

const XS = 'http://www.w3.org/2001/XMLSchema';

export interface ElementDecl {
  name: string;
  ns: string | null;
  /** 'opaque': declared in another schema (ds:Signature), its content is not judged here. */
  type: SimpleTypeDef | ComplexTypeDef | 'opaque';
}

export interface Particle {
  decl: ElementDecl;
  min: number;
  /** Infinity for unbounded. */
  max: number;
}

export interface AttributeDecl {
  name: string;
  type: SimpleTypeDef;
  required: boolean;
}

export interface ComplexTypeDef {
  kind: 'complex';
  /** Element-only content: the particles of its sequence (empty for empty content). */
  particles: Particle[];
  /** Simple content (an extension of a simple type): the type of the value. */
  simple?: SimpleTypeDef;
  attributes: AttributeDecl[];
}

export interface SchemaModel {
  root: ElementDecl;
}

/** The decl's name as Xerces' XSElementDecl.toString writes it: `"namespace":Name`. */
export function declName(d: ElementDecl): string {
  return d.ns ? `"${d.ns}":${d.name}` : d.name;
}

const models = new Map<SchemaName, SchemaModel>();

/** The model of a schema, read from schemas/xsd/ once per process. */
export function schemaModel(schema: SchemaName): SchemaModel {
  let m = models.get(schema);
  if (!m) {
    const info = SCHEMAS[schema];
    m = compileSchema(readFileSync(new URL(info.file, SCHEMAS_DIR_URL), 'utf8'), info.rootName);
    models.set(schema, m);
  }
  return m;
}

/** Compiles an XSD's text (exported for tests). */
export function compileSchema(text: string, rootName: string): SchemaModel {
  const doc = new DOMParser({ errorHandler: { warning: () => {}, error: fail, fatalError: fail } }).parseFromString(text, 'text/xml');
  const schema = doc.documentElement;
  if (!schema || schema.namespaceURI !== XS || schema.localName !== 'schema') throw new Unsupported('not an XSD');
  return new Compiler(schema).compile(rootName);
}

function fail(msg: string): never {
  throw new Unsupported(`the XSD does not parse: ${msg}`);
}

const children = (el: Element): Element[] =>
  Array.from(el.childNodes as unknown as ArrayLike<Node>).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === XS && (n as Element).localName !== 'annotation');

function only(el: Element, allowed: string[]): void {
  for (const c of children(el)) if (!allowed.includes(c.localName!)) throw new Unsupported(`xs:${c.localName} in xs:${el.localName}`);
}

function occurs(el: Element, attr: 'minOccurs' | 'maxOccurs'): number {
  const v = el.getAttribute(attr);
  if (!v) return 1;
  if (v === 'unbounded') return Infinity;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Unsupported(`${attr}="${v}"`);
  return n;
}

/** The built-in simple types the XSDs derive from, with the facets Xerces gives them. */
function builtin(name: string): SimpleTypeDef | undefined {
  const t = (datatype: Datatype, whitespace: SimpleTypeDef['whitespace'], more: Partial<SimpleTypeDef> = {}): SimpleTypeDef => ({ kind: 'simple', name, datatype, whitespace, patterns: [], ...more });
  const int = (v: string) => parseXDecimal(v, true)!;
  switch (name) {
    case 'string':
      return t('string', 'preserve');
    case 'decimal':
      return t('decimal', 'collapse');
    case 'integer':
      return t('integer', 'collapse', { fractionDigits: 0 });
    case 'nonNegativeInteger':
      return t('integer', 'collapse', { fractionDigits: 0, minInclusive: int('0') });
    case 'positiveInteger':
      return t('integer', 'collapse', { fractionDigits: 0, minInclusive: int('1') });
    case 'dateTime':
      return t('dateTime', 'collapse');
    case 'date':
      return t('date', 'collapse');
    default:
      return undefined;
  }
}

class Compiler {
  private readonly target: string | null;
  private readonly named = new Map<string, Element>();
  private readonly types = new Map<Element, SimpleTypeDef | ComplexTypeDef>();

  constructor(private readonly schema: Element) {
    this.target = schema.getAttribute('targetNamespace') || null;
    if (schema.getAttribute('elementFormDefault') !== 'qualified') throw new Unsupported('elementFormDefault is not qualified');
    if ((schema.getAttribute('attributeFormDefault') || 'unqualified') !== 'unqualified') throw new Unsupported('qualified attributes');
    for (const c of children(schema)) {
      const kind = c.localName!;
      if (kind === 'import') continue;
      if (!['element', 'complexType', 'simpleType'].includes(kind)) throw new Unsupported(`global xs:${kind}`);
      this.named.set(`${kind}:${c.getAttribute('name')}`, c);
    }
  }

  compile(rootName: string): SchemaModel {
    const el = this.named.get(`element:${rootName}`);
    if (!el) throw new Unsupported(`no global element ${rootName}`);
    return { root: this.element(el) };
  }

  /** [namespace, local name] of a QName attribute value, resolved with the declarations in scope at `el`. */
  private qname(el: Element, value: string): [string | null, string] {
    const i = value.indexOf(':');
    const prefix = i < 0 ? '' : value.slice(0, i);
    const attr = prefix ? `xmlns:${prefix}` : 'xmlns';
    for (let n: Node | null = el; n && n.nodeType === 1; n = n.parentNode) {
      const e = n as Element;
      if (e.hasAttribute(attr)) return [e.getAttribute(attr) || null, value.slice(i + 1)];
    }
    if (prefix) throw new Unsupported(`undeclared prefix ${prefix}`);
    return [null, value];
  }

  private element(el: Element): ElementDecl {
    for (const a of ['default', 'fixed', 'abstract', 'substitutionGroup', 'form', 'block', 'final']) if (el.hasAttribute(a)) throw new Unsupported(`element @${a}`);
    const ref = el.getAttribute('ref');
    if (ref) {
      const [ns, name] = this.qname(el, ref);
      if (ns === this.target) {
        const global = this.named.get(`element:${name}`);
        if (!global) throw new Unsupported(`no global element ${name}`);
        return this.element(global);
      }
      return { name, ns, type: 'opaque' };
    }
    const name = el.getAttribute('name')!;
    const typeName = el.getAttribute('type');
    let type: ElementDecl['type'];
    if (typeName) type = this.typeByName(el, typeName);
    else {
      const inline = children(el).filter((c) => c.localName === 'complexType' || c.localName === 'simpleType');
      if (inline.length !== 1) throw new Unsupported(`element ${name} without one type`);
      type = this.type(inline[0]!);
    }
    return { name, ns: this.target, type };
  }

  private typeByName(el: Element, value: string): SimpleTypeDef | ComplexTypeDef {
    const [ns, name] = this.qname(el, value);
    if (ns === XS) {
      const b = builtin(name);
      if (!b) throw new Unsupported(`built-in type ${name}`);
      return b;
    }
    if (ns !== this.target) throw new Unsupported(`type ${value}`);
    const def = this.named.get(`complexType:${name}`) ?? this.named.get(`simpleType:${name}`);
    if (!def) throw new Unsupported(`no type ${value}`);
    return this.type(def);
  }

  private type(def: Element): SimpleTypeDef | ComplexTypeDef {
    let t = this.types.get(def);
    if (!t) {
      t = def.localName === 'simpleType' ? this.simpleType(def) : this.complexType(def);
      this.types.set(def, t);
    }
    return t;
  }

  private simpleTypeByName(el: Element, value: string): SimpleTypeDef {
    const t = this.typeByName(el, value);
    if (t.kind !== 'simple') throw new Unsupported(`${value} is not a simple type`);
    return t;
  }

  /** Xerces' name of a type: its own, or "#AnonType_" and the `name` of every enclosing declaration. */
  private typeName(def: Element): string {
    const own = def.getAttribute('name');
    if (own) return own;
    let s = '#AnonType_';
    for (let n = def.parentNode; n && n !== this.schema && n.nodeType === 1; n = n.parentNode) s += (n as Element).getAttribute('name') ?? '';
    return s;
  }

  private simpleType(def: Element): SimpleTypeDef {
    only(def, ['restriction']);
    const r = children(def)[0];
    const baseName = r?.getAttribute('base');
    if (!r || !baseName) throw new Unsupported('simpleType without a restriction base');
    const base = this.simpleTypeByName(r, baseName);
    return this.restrict(base, r, this.typeName(def));
  }

  /** The base's facets, overridden by the restriction's own (patterns accumulate as XSSimpleTypeDecl's fPattern). */
  private restrict(base: SimpleTypeDef, r: Element, name: string): SimpleTypeDef {
    const t: SimpleTypeDef = { ...base, name, patterns: base.patterns };
    const facets = children(r);
    const numeric = (v: string): XDecimal => {
      const d = parseXDecimal(v.trim(), base.datatype === 'integer');
      if (!d || (base.datatype !== 'decimal' && base.datatype !== 'integer')) throw new Unsupported(`bound ${v} on ${base.name}`);
      return d;
    };
    const patterns: string[] = [];
    const enumeration: string[] = [];
    for (const f of facets) {
      const v = f.getAttribute('value') ?? '';
      switch (f.localName) {
        case 'pattern':
          patterns.push(v);
          break;
        case 'enumeration':
          enumeration.push(v);
          break;
        case 'length':
        case 'minLength':
        case 'maxLength':
        case 'totalDigits':
        case 'fractionDigits':
          t[f.localName] = Number(v);
          break;
        case 'minInclusive':
        case 'maxInclusive':
        case 'minExclusive':
        case 'maxExclusive':
          t[f.localName] = numeric(v);
          break;
        default:
          throw new Unsupported(`facet xs:${f.localName}`);
      }
    }
    // Several patterns of one step are one alternative (XSFacets); the step's pattern comes first, then the base's in reverse.
    if (patterns.length > 0) t.patterns = [xsdPattern(patterns.join('|')), ...[...base.patterns].reverse()];
    if (enumeration.length > 0) {
      if (t.datatype === 'string') t.enumeration = { values: enumeration, display: enumeration };
      else if (t.datatype === 'decimal' || t.datatype === 'integer') {
        const values = enumeration.map(numeric);
        t.enumeration = { values, display: values.map(canonicalXDecimal) };
      } else throw new Unsupported(`enumeration of ${t.datatype}`);
    }
    return t;
  }

  private complexType(def: Element): ComplexTypeDef {
    if (def.getAttribute('mixed') === 'true' || def.getAttribute('abstract') === 'true') throw new Unsupported('mixed or abstract complexType');
    only(def, ['sequence', 'attribute', 'simpleContent']);
    const t: ComplexTypeDef = { kind: 'complex', particles: [], attributes: [] };
    for (const c of children(def)) {
      if (c.localName === 'sequence') t.particles = this.sequence(c);
      else if (c.localName === 'attribute') t.attributes.push(this.attribute(c));
      else {
        only(c, ['extension']);
        const ext = children(c)[0];
        if (!ext) throw new Unsupported('simpleContent without an extension');
        only(ext, ['attribute']);
        t.simple = this.simpleTypeByName(ext, ext.getAttribute('base') ?? '');
        for (const a of children(ext)) t.attributes.push(this.attribute(a));
      }
    }
    return t;
  }

  private sequence(seq: Element): Particle[] {
    if (occurs(seq, 'minOccurs') !== 1 || occurs(seq, 'maxOccurs') !== 1) throw new Unsupported('a sequence that repeats');
    only(seq, ['element']);
    const particles = children(seq).map((el) => ({ decl: this.element(el), min: occurs(el, 'minOccurs'), max: occurs(el, 'maxOccurs') }));
    const names = particles.map((p) => declName(p.decl));
    if (new Set(names).size !== names.length) throw new Unsupported('an element twice in one sequence');
    return particles.filter((p) => p.max > 0);
  }

  private attribute(a: Element): AttributeDecl {
    for (const x of ['ref', 'default', 'fixed', 'form']) if (a.hasAttribute(x)) throw new Unsupported(`attribute @${x}`);
    const inline = children(a).find((c) => c.localName === 'simpleType');
    const type = inline ? (this.type(inline) as SimpleTypeDef) : this.simpleTypeByName(a, a.getAttribute('type') || 'xs:anySimpleType');
    const use = a.getAttribute('use') || 'optional';
    if (use === 'prohibited') throw new Unsupported('prohibited attribute');
    return { name: a.getAttribute('name')!, type, required: use === 'required' };
  }
}
