/**
 * X.509 certificate details needed for signing and for `fecr certs show`: distinguished names
 * (readable and strict RFC 4514), serial number, validity, fingerprint and the signer's
 * identification derived from the subject's serialNumber attribute (CPJ-3-101-123456 → 02 3101123456).
 * Parsing walks the DER with node-forge's ASN.1 reader, so any certificate Node can use is readable.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type forge from 'node-forge';

// Only forge's ASN.1 reader and its byte utilities (~5 ms to load; the whole of node-forge takes ~40 ms).
const requireForge = createRequire(import.meta.url);
const asn1 = requireForge('node-forge/lib/asn1.js') as typeof forge.asn1;
const forgeUtil = requireForge('node-forge/lib/util.js') as typeof forge.util;

/** Identification types a signing certificate can carry (Nota 4 of the ANEXOS). */
export type TipoIdentificacionFirmante = '01' | '02' | '03' | '04';

export interface CertificateInfo {
  /** Subject DN, most specific first, e.g. `CN=EMPRESA S.A., OU=CPJ, O=PERSONA JURIDICA, C=CR, SERIALNUMBER=CPJ-3-101-123456`. */
  subject: string;
  /** Issuer DN in the same readable form. */
  issuer: string;
  /** Issuer DN as strict RFC 4514 (the `ds:X509IssuerName` form, as in the Anexo 2 example). */
  issuerRfc4514: string;
  /** X.509 serial number, decimal. */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  /** The subject DN's serialNumber attribute (2.5.4.5), e.g. `CPJ-3-101-123456`. */
  subjectSerialNumber?: string;
  /** Identification number derived from subjectSerialNumber, digits only, e.g. `3101123456`. */
  identificacion?: string;
  /** Identification type derived from subjectSerialNumber's prefix (CPF 01, CPJ 02, DIMEX/NUP 03, NITE 04). */
  tipoIdentificacion?: TipoIdentificacionFirmante;
  /** SHA-256 of the DER, uppercase hex pairs joined by `:` (the form OpenSSL and Node print). */
  sha256Fingerprint: string;
}

interface DnAttribute {
  oid: string;
  /** Decoded string value, or undefined when the ASN.1 type is not a string type. */
  text?: string;
  /** DER of the attribute value (for the RFC 4514 `#hex` form). */
  der: string;
}
type Rdn = DnAttribute[];

const OID_SERIAL_NUMBER = '2.5.4.5';

/** RFC 4514 §3 keywords; any other attribute type is written as a dotted OID with a `#hex` BER value. */
const RFC4514_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.6': 'C',
  '2.5.4.9': 'STREET',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

/** Extra names used in the readable form only. */
const READABLE_NAMES: Record<string, string> = {
  ...RFC4514_NAMES,
  '2.5.4.5': 'SERIALNUMBER',
  '2.5.4.4': 'SURNAME',
  '2.5.4.42': 'GIVENNAME',
  '2.5.4.12': 'T',
  '2.5.4.97': 'ORGANIZATIONIDENTIFIER',
  '1.2.840.113549.1.9.1': 'EMAILADDRESS',
};

/** Parses a DER certificate. Throws on anything that is not an X.509 certificate. */
export function certificateInfo(der: Buffer): CertificateInfo {
  const root = asn1.fromDer(forgeUtil.createBuffer(der.toString('binary')), false);
  const tbs = children(root)[0];
  if (!tbs) throw new Error('not an X.509 certificate');
  let fields = children(tbs);
  // Optional [0] EXPLICIT version.
  if (fields[0] && fields[0].tagClass === asn1.Class.CONTEXT_SPECIFIC) fields = fields.slice(1);
  const [serial, , issuer, validity, subject] = fields;
  if (!serial || !issuer || !validity || !subject) throw new Error('not an X.509 certificate');
  const [nb, na] = children(validity);
  if (!nb || !na) throw new Error('certificate has no validity period');
  const issuerRdns = parseName(issuer);
  const subjectRdns = parseName(subject);
  const subjectSerialNumber = subjectRdns.flat().find((a) => a.oid === OID_SERIAL_NUMBER)?.text;
  const ident = subjectSerialNumber === undefined ? undefined : identificacionFromSerialNumber(subjectSerialNumber);
  const info: CertificateInfo = {
    subject: formatDn(subjectRdns, false),
    issuer: formatDn(issuerRdns, false),
    issuerRfc4514: formatDn(issuerRdns, true),
    serialNumber: integerToDecimal(serial.value as string),
    notBefore: asnTime(nb),
    notAfter: asnTime(na),
    sha256Fingerprint: fingerprint256(der),
  };
  if (subjectSerialNumber !== undefined) info.subjectSerialNumber = subjectSerialNumber;
  if (ident) {
    info.identificacion = ident.numero;
    if (ident.tipo) info.tipoIdentificacion = ident.tipo;
  }
  return info;
}

/** SHA-256 fingerprint in the `AB:CD:…` form. */
export function fingerprint256(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex').toUpperCase().replace(/(..)(?!$)/g, '$1:');
}

/**
 * Derives the identification from a certificate subject serialNumber:
 * `CPJ-3-101-123456` → 02 `3101123456`; `CPF-01-1456-0789` → 01 `114560789` (the 0 of the province
 * padding dropped: cédulas físicas have 9 digits and no leading zero); `DIMEX-…`/`NUP-…` → 03; `NITE-…` → 04.
 * An unprefixed number is typed by its length (9 → 01, 10 → 02, 11–12 → 03). Returns undefined when the
 * value holds no digits.
 */
export function identificacionFromSerialNumber(
  serialNumber: string,
): { tipo?: TipoIdentificacionFirmante; numero: string } | undefined {
  const s = serialNumber.trim().toUpperCase();
  const digits = s.replace(/\D/g, '');
  if (digits === '') return undefined;
  const prefix = /^([A-Z]+)/.exec(s)?.[1];
  const noLeadingZeros = digits.replace(/^0+(?=\d)/, '');
  switch (prefix) {
    case 'CPF':
      return { tipo: '01', numero: noLeadingZeros };
    case 'CPJ':
      return { tipo: '02', numero: digits };
    case 'DIMEX':
    case 'NUP':
    case 'DI':
      return { tipo: '03', numero: noLeadingZeros };
    case 'NITE':
      return { tipo: '04', numero: digits };
    case undefined: {
      const tipo =
        digits.length === 9 ? '01' : digits.length === 10 ? '02' : digits.length === 11 || digits.length === 12 ? '03' : undefined;
      return tipo ? { tipo, numero: digits } : { numero: digits };
    }
    default:
      return { numero: digits };
  }
}

function children(node: forge.asn1.Asn1): forge.asn1.Asn1[] {
  return Array.isArray(node.value) ? node.value : [];
}

function asnTime(node: forge.asn1.Asn1): Date {
  const text = node.value as string;
  if (node.type === asn1.Type.UTCTIME) return asn1.utcTimeToDate(text);
  if (node.type === asn1.Type.GENERALIZEDTIME) return asn1.generalizedTimeToDate(text);
  throw new Error('certificate validity is not a time value');
}

/** Two's-complement big-endian INTEGER content bytes (binary string) → decimal string. */
function integerToDecimal(bytes: string): string {
  if (bytes.length === 0) return '0';
  let n = BigInt('0x' + forgeUtil.bytesToHex(bytes));
  if (bytes.charCodeAt(0) & 0x80) n -= 1n << BigInt(bytes.length * 8);
  return n.toString(10);
}

function parseName(name: forge.asn1.Asn1): Rdn[] {
  return children(name).map((set) =>
    children(set).map((atv): DnAttribute => {
      const [type, value] = children(atv);
      if (!type || !value) throw new Error('malformed distinguished name');
      const attr: DnAttribute = { oid: asn1.derToOid(type.value as string), der: asn1.toDer(value).getBytes() };
      const text = decodeString(value);
      if (text !== undefined) attr.text = text;
      return attr;
    }),
  );
}

function decodeString(v: forge.asn1.Asn1): string | undefined {
  if (v.tagClass !== asn1.Class.UNIVERSAL || v.constructed || typeof v.value !== 'string') return undefined;
  const raw = v.value;
  switch (v.type as number) {
    case asn1.Type.UTF8:
      return Buffer.from(raw, 'binary').toString('utf8');
    case asn1.Type.PRINTABLESTRING:
    case asn1.Type.IA5STRING:
    case 18: // NumericString
    case 26: // VisibleString
    case 20: // TeletexString, treated as Latin-1
      return raw;
    case asn1.Type.BMPSTRING: {
      const b = Buffer.from(raw, 'binary');
      let s = '';
      for (let i = 0; i + 1 < b.length; i += 2) s += String.fromCharCode(b.readUInt16BE(i));
      return s;
    }
    case 28: {
      // UniversalString (UTF-32BE)
      const b = Buffer.from(raw, 'binary');
      let s = '';
      for (let i = 0; i + 3 < b.length; i += 4) s += String.fromCodePoint(b.readUInt32BE(i));
      return s;
    }
    default:
      return undefined;
  }
}

/** Escapes an attribute value per RFC 4514 §2.4. */
function escapeDnValue(v: string): string {
  let s = v.replace(/[\\"+,;<>]/g, (c) => '\\' + c).replace(/\u0000/g, '\\00');
  if (s.startsWith(' ') || s.startsWith('#')) s = '\\' + s;
  if (s.endsWith(' ') && !s.endsWith('\\ ')) s = s.slice(0, -1) + '\\ ';
  return s;
}

/**
 * Formats a DN most-specific-first. Strict mode is RFC 4514 (what Java's X500Principal RFC2253
 * form prints): only the RFC keywords, other types as `2.5.4.5=#<hex of the BER value>`, `,` between
 * RDNs. Readable mode names common attribute types and joins RDNs with `, `.
 */
function formatDn(rdns: Rdn[], strict: boolean): string {
  const names = strict ? RFC4514_NAMES : READABLE_NAMES;
  return [...rdns]
    .reverse()
    .map((rdn) =>
      rdn
        .map((a) => {
          const name = names[a.oid];
          if (name !== undefined && a.text !== undefined) return `${name}=${escapeDnValue(a.text)}`;
          return `${name ?? a.oid}=#${forgeUtil.bytesToHex(a.der)}`;
        })
        .join('+'),
    )
    .join(strict ? ',' : ', ');
}
