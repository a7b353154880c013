/**
 * XAdES-EPES enveloped signatures for comprobantes electrónicos v4.4 (ANEXOS Anexo 2).
 *
 * `signCanonical` signs a document we serialized ourselves and never parses XML. It relies on two facts:
 *
 * 1. The unsigned document comes from `serialize()` (canonical by construction: sorted attributes, no
 *    empty-element tags, C14N escaping) with the default namespace declared on the root and nowhere
 *    else, and no prefixes. Inserting `ds:Signature` as the last child of the root and applying the
 *    enveloped-signature transform gives back exactly that document, and exclusive C14N of it prints
 *    exactly its bytes. So the document digest is SHA-256 of the unsigned bytes.
 * 2. KeyInfo, SignedProperties and SignedInfo are built as `el()` trees without namespace
 *    declarations. Each is digested (or signed) in its exclusive C14N form as the apex of a subtree,
 *    `serializeExclusive(tree, NS)`, which declares xmlns:ds / xmlns:xades where exclusive C14N renders
 *    them. The whole ds:Signature is written once more with `serializeExclusive`, so the document
 *    declares ds on ds:Signature and xades on xades:QualifyingProperties only: no redundant
 *    declarations, and the signed document as a whole is in exclusive canonical form too. Every byte
 *    after the XML declaration is then covered by a digest, the signature value, or a structural check
 *    of the verifier (Signature Id ↔ QualifyingProperties Target, the XAdES namespace).
 *
 * `signXmlDocument` signs arbitrary XML (not built by us) with xml-crypto and the same structure.
 */
import { createHash, sign as rsaSign } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { el, serialize, serializeExclusive, type XmlChild, type XmlElement } from '../xml/canonical.js';
import { formatCr } from '../dates.js';
import type { SigningCredentials } from './p12.js';
import {
  ALG_ENVELOPED,
  ALG_EXC_C14N,
  ALG_RSA_SHA256,
  ALG_SHA256,
  NS_DS,
  NS_XADES,
  POLICY_V44_DIGEST,
  POLICY_V44_DIGEST_METHOD,
  POLICY_V44_URL,
  TYPE_SIGNED_PROPERTIES,
} from './policy.js';
import { useC14nWithPis } from './c14n.js';
import { withXml10LineEnds } from './xml-dom.js';

export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

const SIGNATURE_NS = { ds: NS_DS, xades: NS_XADES } as const;

export interface SignOptions {
  /** Instant recorded as xades:SigningTime (written in Costa Rica time, -06:00). */
  signingTime: Date;
  /**
   * Source of the unique part of the Id attributes (e.g. 16 random bytes as hex). Called once per
   * signature; the value must be usable inside an XML ID (letters, digits, `-`, `_`, `.`).
   */
  newId: () => string;
}

/** The Id attributes of one signature. */
export interface SignatureIds {
  signature: string;
  documentReference: string;
  keyInfoReference: string;
  keyInfo: string;
  signedProperties: string;
}

export function signatureIds(unique: string): SignatureIds {
  if (!/^[A-Za-z0-9_.-]+$/.test(unique)) throw new Error(`invalid signature id ${JSON.stringify(unique)}`);
  return {
    signature: `Signature-${unique}`,
    documentReference: `Reference-${unique}`,
    keyInfoReference: `ReferenceKeyInfo-${unique}`,
    keyInfo: `KeyInfoId-${unique}`,
    signedProperties: `xades-${unique}`,
  };
}


/**
 * Signs a canonical unsigned document (the output of `serialize()` on the document's root element) and
 * returns the signed document with its XML declaration. Throws when the input is not in the shape
 * described at the top of this file; use `signXmlDocument` for other XML.
 */
export function signCanonical(canonicalXml: string, creds: SigningCredentials, opts: SignOptions): string {
  const closeAt = checkCanonicalEnvelope(canonicalXml);
  const ids = signatureIds(opts.newId());
  const docDigest = sha256b64(canonicalXml);

  const keyInfoTree = keyInfoElement(creds, ids);
  const signedPropertiesTree = signedPropertiesElement(creds, ids, opts.signingTime);
  const signedInfoTree = signedInfoElement(ids, {
    document: docDigest,
    keyInfo: sha256b64(serializeExclusive(keyInfoTree, SIGNATURE_NS)),
    signedProperties: sha256b64(serializeExclusive(signedPropertiesTree, SIGNATURE_NS)),
  });
  const signedInfo = serializeExclusive(signedInfoTree, SIGNATURE_NS);
  const signatureValue = rsaSign('sha256', Buffer.from(signedInfo, 'utf8'), creds.privateKey).toString('base64');

  const signature = serializeExclusive(
    el(
      'ds:Signature',
      { Id: ids.signature },
      signedInfoTree,
      // No Id on SignatureValue: nothing references it, and an unsigned attribute could change undetected.
      el('ds:SignatureValue', signatureValue),
      keyInfoTree,
      e('ds:Object', el('xades:QualifyingProperties', { Target: `#${ids.signature}` }, signedPropertiesTree)),
    ),
    SIGNATURE_NS,
  );
  return XML_DECLARATION + canonicalXml.slice(0, closeAt) + signature + canonicalXml.slice(closeAt);
}

/**
 * Signs any well-formed XML document (e.g. one we did not build) with the same XAdES-EPES structure,
 * using xml-crypto for canonicalization. An XML declaration in the input is replaced by ours.
 */
export function signXmlDocument(xml: string, creds: SigningCredentials, opts: SignOptions): string {
  const body = xml.replace(/^\uFEFF?\s*(<\?xml[^?]*\?>)?\s*/, '');
  const ids = signatureIds(opts.newId());
  // Written by xml-crypto inside ds:Signature, where ds is already declared.
  const insideSignature = { ds: NS_DS };
  const qualifyingProperties = serializeExclusive(
    el('xades:QualifyingProperties', { Target: `#${ids.signature}` }, signedPropertiesElement(creds, ids, opts.signingTime)),
    SIGNATURE_NS,
    insideSignature,
  );
  const sx = new SignedXml({
    privateKey: creds.privateKey,
    signatureAlgorithm: ALG_RSA_SHA256,
    canonicalizationAlgorithm: ALG_EXC_C14N,
    keyInfoAttributes: { Id: ids.keyInfo },
    // The KeyInfo element is written by xml-crypto inside ds:Signature, so its content needs no declarations.
    getKeyInfoContent: () => keyInfoElement(creds, ids).children!.map((c) => serializeExclusive(c, SIGNATURE_NS, insideSignature)).join(''),
    objects: [{ content: qualifyingProperties }],
  });
  useC14nWithPis(sx as never);
  sx.addReference({
    xpath: '/*',
    isEmptyUri: true,
    transforms: [ALG_ENVELOPED, ALG_EXC_C14N],
    digestAlgorithm: ALG_SHA256,
    id: ids.documentReference,
  });
  sx.addReference({
    xpath: `//*[@Id='${ids.keyInfo}']`,
    transforms: [ALG_EXC_C14N],
    digestAlgorithm: ALG_SHA256,
    id: ids.keyInfoReference,
  });
  sx.addReference({
    xpath: `//*[@Id='${ids.signedProperties}']`,
    transforms: [ALG_EXC_C14N],
    digestAlgorithm: ALG_SHA256,
    type: TYPE_SIGNED_PROPERTIES,
  });
  // xml-crypto parses `body` with xmldom, whose default line ends are XML 1.1's: NEL and U+2028 in the text
  // would be rewritten as LF in the signed output.
  withXml10LineEnds(() =>
    sx.computeSignature(body, {
      prefix: 'ds',
      attrs: { Id: ids.signature },
      location: { reference: '/*', action: 'append' },
    }),
  );
  return XML_DECLARATION + sx.getSignedXml();
}

// ---------------------------------------------------------------------------------------------------

function sha256b64(s: string | Buffer): string {
  return createHash('sha256').update(s).digest('base64');
}

/** `ds:KeyInfo` with the certificate and the RSA public key. */
function keyInfoElement(creds: SigningCredentials, ids: SignatureIds): XmlElement {
  return el(
    'ds:KeyInfo',
    { Id: ids.keyInfo },
    e('ds:X509Data', el('ds:X509Certificate', creds.certificateBase64)),
    e(
      'ds:KeyValue',
      e('ds:RSAKeyValue', el('ds:Modulus', creds.rsaKeyValue.modulus), el('ds:Exponent', creds.rsaKeyValue.exponent)),
    ),
  );
}

/** An element without attributes. */
function e(name: string, ...children: XmlChild[]): XmlElement {
  return el(name, undefined, ...children);
}

/** A `ds:` element inside SignedProperties. */
function dsIn(name: string, attrs: Record<string, string>, text?: string): XmlElement {
  return text === undefined ? el(`ds:${name}`, attrs) : el(`ds:${name}`, attrs, text);
}

function signedPropertiesElement(creds: SigningCredentials, ids: SignatureIds, signingTime: Date): XmlElement {
  const certDigest = createHash('sha256').update(creds.certificateDer).digest('base64');
  return el(
    'xades:SignedProperties',
    { Id: ids.signedProperties },
    e(
      'xades:SignedSignatureProperties',
      el('xades:SigningTime', formatCr(signingTime)),
      e(
        'xades:SigningCertificate',
        e(
          'xades:Cert',
          e('xades:CertDigest', dsIn('DigestMethod', { Algorithm: ALG_SHA256 }), dsIn('DigestValue', {}, certDigest)),
          e(
            'xades:IssuerSerial',
            dsIn('X509IssuerName', {}, creds.certificate.issuerRfc4514),
            dsIn('X509SerialNumber', {}, creds.certificate.serialNumber),
          ),
        ),
      ),
      e(
        'xades:SignaturePolicyIdentifier',
        e(
          'xades:SignaturePolicyId',
          e('xades:SigPolicyId', el('xades:Identifier', POLICY_V44_URL)),
          e(
            'xades:SigPolicyHash',
            dsIn('DigestMethod', { Algorithm: POLICY_V44_DIGEST_METHOD }),
            dsIn('DigestValue', {}, POLICY_V44_DIGEST),
          ),
        ),
      ),
    ),
    e(
      'xades:SignedDataObjectProperties',
      el(
        'xades:DataObjectFormat',
        { ObjectReference: `#${ids.documentReference}` },
        el('xades:MimeType', 'text/xml'),
        el('xades:Encoding', 'UTF-8'),
      ),
    ),
  );
}

function referenceElement(
  attrs: Record<string, string>,
  transforms: string[],
  digest: string,
): XmlElement {
  return el(
    'ds:Reference',
    attrs,
    e('ds:Transforms', transforms.map((t) => el('ds:Transform', { Algorithm: t }))),
    el('ds:DigestMethod', { Algorithm: ALG_SHA256 }),
    el('ds:DigestValue', digest),
  );
}

function signedInfoElement(
  ids: SignatureIds,
  digests: { document: string; keyInfo: string; signedProperties: string },
): XmlElement {
  return el(
    'ds:SignedInfo',
    undefined,
    el('ds:CanonicalizationMethod', { Algorithm: ALG_EXC_C14N }),
    el('ds:SignatureMethod', { Algorithm: ALG_RSA_SHA256 }),
    referenceElement({ Id: ids.documentReference, URI: '' }, [ALG_ENVELOPED, ALG_EXC_C14N], digests.document),
    referenceElement({ Id: ids.keyInfoReference, URI: `#${ids.keyInfo}` }, [ALG_EXC_C14N], digests.keyInfo),
    referenceElement(
      { Type: TYPE_SIGNED_PROPERTIES, URI: `#${ids.signedProperties}` },
      [ALG_EXC_C14N],
      digests.signedProperties,
    ),
  );
}

/**
 * Cheap guard (a scan of the tags, no parsing) that the input has the shape `signCanonical` relies on:
 * one root element and nothing around it, no comments / PIs / CDATA / DOCTYPE / empty-element tags,
 * no namespace prefixes, `xmlns` only on the root, attributes in double quotes. Returns the offset of
 * the root's end tag.
 */
function checkCanonicalEnvelope(xml: string): number {
  const fail = (why: string): never => {
    throw new Error(`signCanonical: input is not a canonical document built by serialize(): ${why}`);
  };
  const rootName = /^<([A-Za-z_][A-Za-z0-9_.-]*)[ >]/.exec(xml)?.[1];
  if (rootName === undefined) fail('it must start with the root start tag (no XML declaration, no prefix)');
  const closeAt = xml.length - rootName!.length - 3;
  if (xml.slice(closeAt) !== `</${rootName}>`) fail(`it must end with </${rootName}>`);

  let depth = 0;
  let i = 0;
  for (;;) {
    i = xml.indexOf('<', i);
    if (i < 0) break;
    const c = xml.charCodeAt(i + 1);
    if (c === 0x2f /* / */) {
      const end = xml.indexOf('>', i);
      if (xml.slice(i + 2, end).includes(':')) fail('prefixed element');
      depth--;
      if (depth === 0 && end !== xml.length - 1) fail('content after the root element');
      i = end + 1;
      continue;
    }
    if (c === 0x21 /* ! */ || c === 0x3f /* ? */) fail('comment, CDATA, DOCTYPE or processing instruction');
    // Start tag: walk it, honouring double-quoted attribute values (which may contain '>').
    let j = i + 1;
    let inQuote = false;
    let attrStart = -1;
    for (; j < xml.length; j++) {
      const ch = xml.charCodeAt(j);
      if (inQuote) {
        if (ch === 0x22) inQuote = false;
        continue;
      }
      if (ch === 0x22) {
        inQuote = true;
      } else if (ch === 0x27 /* ' */) {
        fail('single-quoted attribute');
      } else if (ch === 0x20) {
        attrStart = j + 1;
      } else if (ch === 0x09 || ch === 0x0a || ch === 0x0d) {
        fail('whitespace other than a single space inside a tag');
      } else if (ch === 0x3d /* = */ && attrStart > 0) {
        const name = xml.slice(attrStart, j);
        if (name.includes(':')) fail(`prefixed attribute or namespace declaration ${name}`);
        if (name === 'xmlns' && depth !== 0) fail('default namespace declared below the root');
        attrStart = -1;
      } else if (ch === 0x3e /* > */) {
        break;
      }
    }
    if (j >= xml.length) fail('unterminated start tag');
    if (xml.charCodeAt(j - 1) === 0x2f) fail('empty-element tag');
    const nameEnd = xml.slice(i + 1, j).search(/[ >]|$/);
    if (xml.slice(i + 1, i + 1 + nameEnd).includes(':')) fail('prefixed element');
    depth++;
    i = j + 1;
  }
  if (depth !== 0) fail('unbalanced tags');
  return closeAt;
}
