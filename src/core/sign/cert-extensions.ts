/**
 * The X.509 extensions a chain check needs (RFC 5280 §4.2.1.3, §4.2.1.9): basicConstraints (cA, pathLenConstraint)
 * and keyUsage, read from the DER with node-forge's ASN.1 reader (node:crypto's X509Certificate says `ca` but not the
 * path length nor the key usage bits). Also the extensions marked critical, so an unknown critical one can refuse.
 */
import { createRequire } from 'node:module';
import type forge from 'node-forge';

const requireForge = createRequire(import.meta.url);
const asn1 = requireForge('node-forge/lib/asn1.js') as typeof forge.asn1;
const forgeUtil = requireForge('node-forge/lib/util.js') as typeof forge.util;

export const OID_BASIC_CONSTRAINTS = '2.5.29.19';
export const OID_KEY_USAGE = '2.5.29.15';

/** keyUsage bits (RFC 5280 §4.2.1.3), by name. */
export type KeyUsageName = 'digitalSignature' | 'nonRepudiation' | 'keyEncipherment' | 'dataEncipherment' | 'keyAgreement' | 'keyCertSign' | 'cRLSign' | 'encipherOnly' | 'decipherOnly';
const KEY_USAGE_BITS: KeyUsageName[] = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign', 'encipherOnly', 'decipherOnly'];

export interface CertificateExtensions {
  /** basicConstraints present and cA TRUE. */
  ca: boolean;
  /** basicConstraints pathLenConstraint, when present. */
  pathLen?: number;
  /** The keyUsage bits set; undefined when the certificate has no keyUsage extension (any use). */
  keyUsage?: ReadonlySet<KeyUsageName>;
  /** OIDs of every extension marked critical. */
  critical: string[];
}

/** Reads the extensions of a DER certificate. Throws on anything that is not an X.509 certificate. */
export function certificateExtensions(der: Buffer): CertificateExtensions {
  const root = asn1.fromDer(forgeUtil.createBuffer(der.toString('binary')), false);
  const tbs = children(root)[0];
  if (!tbs) throw new Error('not an X.509 certificate');
  const out: CertificateExtensions = { ca: false, critical: [] };
  // extensions: [3] EXPLICIT SEQUENCE OF Extension, the last field of the TBSCertificate.
  const wrapper = children(tbs).find((n) => n.tagClass === asn1.Class.CONTEXT_SPECIFIC && n.type === 3);
  const list = wrapper ? children(children(wrapper)[0]!) : [];
  for (const ext of list) {
    const parts = children(ext);
    const oid = asn1.derToOid(parts[0]!.value as string);
    const critical = parts.length === 3 && parts[1]!.type === asn1.Type.BOOLEAN && (parts[1]!.value as string) !== '\x00';
    if (critical) out.critical.push(oid);
    const value = parts[parts.length - 1]!.value as string;
    if (oid === OID_BASIC_CONSTRAINTS) {
      const seq = children(asn1.fromDer(forgeUtil.createBuffer(value), false));
      let i = 0;
      if (seq[i]?.type === asn1.Type.BOOLEAN) out.ca = (seq[i++]!.value as string) !== '\x00';
      if (seq[i]?.type === asn1.Type.INTEGER) out.pathLen = Number.parseInt(forgeUtil.bytesToHex(seq[i]!.value as string) || '0', 16);
    } else if (oid === OID_KEY_USAGE) {
      const bits = fromDerFlat(value).value as string;
      // BIT STRING content: the count of unused bits, then the bits, most significant first.
      const bytes = Buffer.from(bits.slice(1), 'binary');
      const set = new Set<KeyUsageName>();
      KEY_USAGE_BITS.forEach((name, n) => {
        const byte = bytes[n >> 3];
        if (byte !== undefined && byte & (0x80 >> (n & 7))) set.add(name);
      });
      out.keyUsage = set;
    }
  }
  return out;
}

/** A DER value without forge's guess that a BIT STRING holds ASN.1 (a keyUsage of 8 full bits could parse as such). */
function fromDerFlat(der: string): forge.asn1.Asn1 {
  const read = asn1.fromDer as unknown as (b: forge.util.ByteBuffer, o: { strict: boolean; decodeBitStrings: boolean }) => forge.asn1.Asn1;
  return read(forgeUtil.createBuffer(der), { strict: false, decodeBitStrings: false });
}

function children(node: forge.asn1.Asn1): forge.asn1.Asn1[] {
  return Array.isArray(node.value) ? node.value : [];
}
