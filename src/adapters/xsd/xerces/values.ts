/**
 * A simple type's value judged as Java's validator (the JDK's Xerces, XSSimpleTypeDecl) judges it, with its words:
 * the patterns first, then the datatype (decimal, integer, dateTime), then the facets in Xerces' order (maxLength,
 * minLength, length, enumeration, fractionDigits, totalDigits, maxInclusive, maxExclusive, minInclusive,
 * minExclusive). Only the first failure is reported, as Xerces throws at the first.
 */

/** The datatypes whose values this module can judge (the ones the v4.4 XSDs use). */
export type Datatype = 'string' | 'decimal' | 'integer' | 'dateTime' | 'date';

export type Whitespace = 'preserve' | 'replace' | 'collapse';

/** A decimal as Xerces' DecimalDV.XDecimal holds it (leading zeros of the integer part and trailing zeros of the fraction dropped). */
export interface XDecimal {
  sign: -1 | 0 | 1;
  intDigits: number;
  fracDigits: number;
  ivalue: string;
  fvalue: string;
  integer: boolean;
}

export interface Pattern {
  /** As written in the XSD (Xerces prints it). */
  source: string;
  re: RegExp;
}

/** A simple type with every facet it has, its own and inherited, resolved as Xerces resolves them. */
export interface SimpleTypeDef {
  kind: 'simple';
  /** Xerces' name for it: the XSD name, the built-in's name, or `#AnonType_…` for an anonymous type. */
  name: string;
  datatype: Datatype;
  whitespace: Whitespace;
  /** In Xerces' order (fPattern): checked from the last to the first. */
  patterns: Pattern[];
  length?: number;
  minLength?: number;
  maxLength?: number;
  enumeration?: { values: (string | XDecimal)[]; display: string[] };
  fractionDigits?: number;
  totalDigits?: number;
  maxInclusive?: XDecimal;
  maxExclusive?: XDecimal;
  minInclusive?: XDecimal;
  minExclusive?: XDecimal;
}

/** XSSimpleTypeDecl.normalize: replace turns tabs and line ends into spaces; collapse also joins runs and trims. */
export function normalizeWhitespace(value: string, ws: Whitespace): string {
  if (ws === 'preserve') return value;
  const replaced = value.replace(/[\t\n\r]/g, ' ');
  return ws === 'replace' ? replaced : replaced.replace(/ {2,}/g, ' ').replace(/^ | $/g, '');
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** DecimalDV's XDecimal(content) / IntegerDV's XDecimal(content, true); undefined where Xerces throws. */
export function parseXDecimal(content: string, integer: boolean): XDecimal | undefined {
  const len = content.length;
  if (len === 0) return undefined;
  let sign: -1 | 0 | 1 = 1;
  let intStart = 0;
  if (content[0] === '+') intStart = 1;
  else if (content[0] === '-') {
    intStart = 1;
    sign = -1;
  }
  let actualIntStart = intStart;
  while (actualIntStart < len && content[actualIntStart] === '0') actualIntStart++;
  let intEnd = actualIntStart;
  while (intEnd < len && isDigit(content[intEnd])) intEnd++;
  let fracStart = 0;
  let fracEnd = 0;
  if (integer) {
    if (intEnd < len || intStart === intEnd) return undefined;
  } else {
    if (intEnd < len) {
      if (content[intEnd] !== '.') return undefined;
      fracStart = intEnd + 1;
      fracEnd = len;
    }
    if (intStart === intEnd && fracStart === fracEnd) return undefined;
    while (fracEnd > fracStart && content[fracEnd - 1] === '0') fracEnd--;
    for (let i = fracStart; i < fracEnd; i++) if (!isDigit(content[i])) return undefined;
  }
  const intDigits = intEnd - actualIntStart;
  const fracDigits = fracEnd - fracStart;
  const ivalue = intDigits > 0 ? content.slice(actualIntStart, intEnd) : '';
  const fvalue = fracDigits > 0 ? content.slice(fracStart, fracEnd) : '';
  if (intDigits === 0 && fracDigits === 0) sign = 0;
  return { sign, intDigits, fracDigits, ivalue, fvalue, integer };
}

/** XDecimal.compareTo: -1, 0 or 1. */
export function compareXDecimal(a: XDecimal, b: XDecimal): number {
  if (a.sign !== b.sign) return a.sign > b.sign ? 1 : -1;
  if (a.sign === 0) return 0;
  let r: number;
  if (a.intDigits !== b.intDigits) r = a.intDigits > b.intDigits ? 1 : -1;
  else if (a.ivalue !== b.ivalue) r = a.ivalue > b.ivalue ? 1 : -1;
  else r = a.fvalue === b.fvalue ? 0 : a.fvalue > b.fvalue ? 1 : -1;
  return a.sign * r;
}

/** XDecimal.toString: the canonical form Xerces prints for a facet's value (`0.0`, `100.0`, `1000`). */
export function canonicalXDecimal(d: XDecimal): string {
  if (d.sign === 0) return d.integer ? '0' : '0.0';
  if (d.integer && d.sign > 0) return d.ivalue;
  let s = (d.sign === -1 ? '-' : '') + (d.intDigits !== 0 ? d.ivalue : '0');
  if (!d.integer) s += '.' + (d.fracDigits !== 0 ? d.fvalue : '0');
  return s;
}

const DATE_TIME = /^(-?)(\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d(?:\.\d+)?)(Z|[+-]\d\d:\d\d)?$/;
const DATE = /^(-?)(\d{4,})-(\d\d)-(\d\d)(Z|[+-]\d\d:\d\d)?$/;

/** DateTimeDV / DateDV: the lexical form and AbstractDateTimeDV.validateDateTime's ranges. */
function validDateTime(v: string, withTime: boolean): boolean {
  const m = (withTime ? DATE_TIME : DATE).exec(v);
  if (!m) return false;
  const yearText = m[2]!;
  if ((yearText.length > 4 && yearText[0] === '0') || yearText.length > 9) return false;
  const year = Number(yearText) * (m[1] ? -1 : 1);
  const month = Number(m[3]);
  const day = Number(m[4]);
  if (year === 0 || month < 1 || month > 12 || day < 1 || day > maxDayInMonth(year, month)) return false;
  const tz = withTime ? m[8] : m[5];
  if (withTime) {
    const hour = Number(m[5]);
    const minute = Number(m[6]);
    const second = Number(m[7]);
    if (hour > 23 && !(hour === 24 && minute === 0 && second === 0)) return false;
    if (minute > 59 || second >= 60) return false;
  }
  if (tz && tz !== 'Z') {
    const h = Number(tz.slice(1, 3));
    const mi = Number(tz.slice(4, 6));
    if (h > 14 || (h === 14 && mi !== 0) || mi > 59) return false;
  }
  return true;
}

function maxDayInMonth(year: number, month: number): number {
  if (month === 4 || month === 6 || month === 9 || month === 11) return 30;
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return 31;
}

/** The actual value of a lexical form of the datatype, or undefined when Xerces' DV rejects it. */
export function actualValue(datatype: Datatype, v: string): string | XDecimal | undefined {
  switch (datatype) {
    case 'string':
      return v;
    case 'decimal':
      return parseXDecimal(v, false);
    case 'integer':
      return parseXDecimal(v, true);
    case 'dateTime':
      return validDateTime(v, true) ? v : undefined;
    case 'date':
      return validDateTime(v, false) ? v : undefined;
  }
}

/**
 * Xerces' first complaint about a simple value, in its words (the key and the arguments of XMLSchemaMessages), or
 * undefined when the value is valid. `text` is the element's (or attribute's) character content.
 */
export function simpleValueError(type: SimpleTypeDef, text: string): string | undefined {
  const content = normalizeWhitespace(text, type.whitespace);
  const name = type.name;
  for (let i = type.patterns.length - 1; i >= 0; i--) {
    const p = type.patterns[i]!;
    if (!p.re.test(content)) return `cvc-pattern-valid: Value '${content}' is not facet-valid with respect to pattern '${p.source}' for type '${name}'.`;
  }
  const value = actualValue(type.datatype, content);
  if (value === undefined) return `cvc-datatype-valid.1.2.1: '${content}' is not a valid value for '${type.datatype}'.`;
  if (typeof value === 'string') {
    const length = value.length;
    if (type.maxLength !== undefined && length > type.maxLength)
      return `cvc-maxLength-valid: Value '${content}' with length = '${length}' is not facet-valid with respect to maxLength '${type.maxLength}' for type '${name}'.`;
    if (type.minLength !== undefined && length < type.minLength)
      return `cvc-minLength-valid: Value '${content}' with length = '${length}' is not facet-valid with respect to minLength '${type.minLength}' for type '${name}'.`;
    if (type.length !== undefined && length !== type.length)
      return `cvc-length-valid: Value '${content}' with length = '${length}' is not facet-valid with respect to length '${type.length}' for type '${name}'.`;
  }
  if (type.enumeration && !type.enumeration.values.some((e) => sameValue(e, value)))
    return `cvc-enumeration-valid: Value '${content}' is not facet-valid with respect to enumeration '[${type.enumeration.display.join(', ')}]'. It must be a value from the enumeration.`;
  if (typeof value === 'string') return undefined;
  if (type.fractionDigits !== undefined && value.fracDigits > type.fractionDigits)
    return `cvc-fractionDigits-valid: Value '${content}' has ${value.fracDigits} fraction digits, but the number of fraction digits has been limited to ${type.fractionDigits}.`;
  const total = value.intDigits + value.fracDigits;
  if (type.totalDigits !== undefined && total > type.totalDigits)
    return `cvc-totalDigits-valid: Value '${content}' has ${total} total digits, but the number of total digits has been limited to ${type.totalDigits}.`;
  const bound = (facet: string, limit: XDecimal) => `cvc-${facet}-valid: Value '${content}' is not facet-valid with respect to ${facet} '${canonicalXDecimal(limit)}' for type '${name}'.`;
  if (type.maxInclusive && compareXDecimal(value, type.maxInclusive) > 0) return bound('maxInclusive', type.maxInclusive);
  if (type.maxExclusive && compareXDecimal(value, type.maxExclusive) >= 0) return bound('maxExclusive', type.maxExclusive);
  if (type.minInclusive && compareXDecimal(value, type.minInclusive) < 0) return bound('minInclusive', type.minInclusive);
  if (type.minExclusive && compareXDecimal(value, type.minExclusive) <= 0) return bound('minExclusive', type.minExclusive);
  return undefined;
}

function sameValue(a: string | XDecimal, b: string | XDecimal): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return compareXDecimal(a, b) === 0;
}

/** Thrown where the XSD or the document uses what this emulation of Xerces does not model: the caller falls back. */
export class Unsupported extends Error {}

/**
 * An XSD pattern as a JavaScript RegExp (anchored, as XSD patterns are), for the subset the v4.4 XSDs use:
 * literals, classes of literals and ranges, groups, alternatives, quantifiers, and `\d` (any Unicode decimal digit,
 * \p{Nd}, as in Xerces). Anything else is Unsupported.
 */
export function xsdPattern(source: string): Pattern {
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const e = source[++i];
      if (e === 'd') out += '\\p{Nd}';
      else if (e === 'D') out += '\\P{Nd}';
      else if (e !== undefined && '\\|.-^?*+{}()[]'.includes(e)) out += '\\' + e;
      else throw new Unsupported(`pattern escape \\${e ?? ''} in ${source}`);
    } else if (c === '[' && source[i + 1] === '^') throw new Unsupported(`negated class in ${source}`);
    else if (c === '-' && source[i + 1] === '[') throw new Unsupported(`class subtraction in ${source}`);
    else if (c === '.') out += '[^\\n\\r]';
    else if (c === '$' || c === '/') out += '\\' + c;
    else if (/[\w[\]{}(),|?*+ \-^:#@'"]/u.test(c) || c.charCodeAt(0) > 127) out += c;
    else throw new Unsupported(`pattern character ${c} in ${source}`);
  }
  return { source, re: new RegExp(`^(?:${out})$`, 'u') };
}
