/**
 * The XMLDSig core checks, done on the DOM for a detail per item: every ds:Reference (resolved by URI, with
 * signature-wrapping refused, canonicalized, digested) and the SignatureValue over the canonical SignedInfo.
 * xml-crypto is loaded for an unusual transform chain only.
 */
import { createHash, createVerify, type X509Certificate } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { ALG_XPATH, canonicalizeDirect, genericOptions, useC14nWithPis, XPathNotSignatureTransform } from './c14n.js';
import { NS_DS } from './policy.js';
import { addCheck, errorText, type VerifyReport } from './verify-report.js';
import { childElements, firstChild, isDs } from './xml-dom.js';
import { codeTable } from '../code-table.js';

/** Digest method URIs → node:crypto hash names. */
export const HASHES: Record<string, string> = codeTable({
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  'http://www.w3.org/2001/04/xmldsig-more#sha224': 'sha224',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
});
const RSA_SIGNATURES: Record<string, string> = codeTable({
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1': 'RSA-SHA1',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': 'RSA-SHA256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384': 'RSA-SHA384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': 'RSA-SHA512',
});

export function checkReferencesAndValue(
  report: VerifyReport,
  doc: Document,
  certDer: Buffer | undefined,
  x509: X509Certificate | undefined,
  sigMethod: string,
): void {
  const check = (name: string, ok: boolean, detail: string) => addCheck(report, { name, ok, detail });
  const root = doc.documentElement!;
  const topLevel = childElements(root).filter((e) => isDs(e, 'Signature'));
  const signature = topLevel[topLevel.length - 1] ?? (doc.getElementsByTagNameNS(NS_DS, 'Signature')[0] as Element);
  // Same-document references exclude comments (the earlier checks do not look at comments); SignedInfo keeps
  // its own under a #WithComments CanonicalizationMethod, which signs them.
  const signedInfoC14n = firstChild(firstChild(signature, NS_DS, 'SignedInfo'), NS_DS, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
  removeComments(doc, signedInfoC14n.endsWith('#WithComments') ? firstChild(signature, NS_DS, 'SignedInfo') : undefined);
  // xml-crypto (loadSignature: XPath over the signature) is only needed for unusual transform chains.
  let loaded: SignedXml | undefined;
  const generic = (): SignedXml => {
    if (!loaded) {
      loaded = newSignedXml(x509);
      loaded.loadSignature(signature);
    }
    return loaded;
  };
  let idx: Map<string, Element[]> | undefined;
  const ids = () => (idx ??= idIndex(doc));
  const signedInfoEl = firstChild(signature, NS_DS, 'SignedInfo');
  const refs = (signedInfoEl ? childElements(signedInfoEl) : [])
    .filter((e) => isDs(e, 'Reference'))
    .map((r) => ({
      uri: r.getAttribute('URI'),
      transforms: childElements(firstChild(r, NS_DS, 'Transforms'))
        .filter((t) => isDs(t, 'Transform'))
        .map((t) => t.getAttribute('Algorithm') ?? ''),
      digestAlgorithm: firstChild(r, NS_DS, 'DigestMethod')?.getAttribute('Algorithm') ?? '',
      digestValue: firstChild(r, NS_DS, 'DigestValue')?.textContent ?? '',
    }));
  refs.forEach((ref, i) => {
    const label = `reference[${i}]`;
    const uri = ref.uri ?? '';
    const where = uri === '' ? 'URI="" (document)' : `URI="${uri}"`;
    try {
      const target = resolveUri(doc, uri, ids);
      if (typeof target === 'string') {
        check(label, false, `${where}: ${target}`);
        return;
      }
      const hash = HASHES[ref.digestAlgorithm];
      if (!hash) {
        check(label, false, `${where}: unsupported digest ${ref.digestAlgorithm}`);
        return;
      }
      const canon =
        canonicalizeDirect(ref.transforms, target, signature) ?? generic().getCanonXml(ref.transforms, target, genericOptions(ref.transforms, target));
      const digest = createHash(hash).update(canon, 'utf8').digest('base64');
      const expected = String(ref.digestValue ?? '').replace(/\s+/g, '');
      check(label, digest === expected, digest === expected ? `${where}: digest matches` : `${where}: digest mismatch (computed ${digest}, signed ${expected})`);
    } catch (e) {
      check(label, false, `${where}: ${errorText(e)}`);
    }
  });

  // Signature value over the canonical SignedInfo.
  if (!certDer || !x509) {
    check('signature.value', false, 'no usable certificate to verify with');
    return;
  }
  const rsaAlg = RSA_SIGNATURES[sigMethod];
  if (!rsaAlg) {
    check('signature.value', false, `unsupported SignatureMethod ${sigMethod}`);
    return;
  }
  try {
    const signedInfo = firstChild(signature, NS_DS, 'SignedInfo')!;
    const c14n = firstChild(signedInfo, NS_DS, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
    const canon = canonicalizeDirect([c14n], signedInfo, signature) ?? generic().getCanonXml([c14n], signedInfo, genericOptions([c14n], signedInfo));
    const value = strictBase64(firstChild(signature, NS_DS, 'SignatureValue')?.textContent ?? '');
    if (!value) {
      check('signature.value', false, 'SignatureValue is not valid base64');
      return;
    }
    const ok = createVerify(rsaAlg).update(canon, 'utf8').verify(x509.publicKey, value);
    check('signature.value', ok, ok ? `${rsaAlg} signature over SignedInfo verifies with the KeyInfo certificate` : 'SignatureValue does not verify with the KeyInfo certificate');
  } catch (e) {
    check('signature.value', false, errorText(e));
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes base64 strictly (whitespace allowed): Node's decoder ignores junk after the padding. */
export function strictBase64(text: string): Buffer | undefined {
  const t = text.replace(/\s+/g, '');
  return BASE64.test(t) ? Buffer.from(t, 'base64') : undefined;
}

export function newSignedXml(x509: X509Certificate | undefined): SignedXml {
  const sx = new SignedXml({
    publicCert: x509?.toString(),
    getCertFromKeyInfo: () => null,
  });
  sx.CanonicalizationAlgorithms[ALG_XPATH] = XPathNotSignatureTransform as never;
  useC14nWithPis(sx as never);
  return sx;
}

function resolveUri(doc: Document, uri: string, ids: () => Map<string, Element[]>): Node | string {
  if (uri === '') return doc.documentElement!;
  if (!uri.startsWith('#')) return 'only same-document references are supported';
  const id = uri.slice(1);
  let matches: Element[];
  if (id !== '') matches = ids().get(id) ?? [];
  else {
    matches = [];
    const all = doc.getElementsByTagName('*');
    for (let i = 0; i < all.length; i++) {
      const e = all[i]!;
      if (e.getAttribute('Id') === id || e.getAttribute('ID') === id || e.getAttribute('id') === id) matches.push(e);
    }
  }
  if (matches.length === 0) return `no element with Id ${id}`;
  if (matches.length > 1) return `${matches.length} elements with Id ${id} (possible signature wrapping)`;
  return matches[0]!;
}

/**
 * Every element by each non-empty value of its Id, ID or id attribute (an element counts once per value),
 * in one walk. xmldom's getAttribute gives "" for a missing attribute; an empty id is looked up by `resolveUri`
 * the slow way.
 */
function idIndex(doc: Document): Map<string, Element[]> {
  const index = new Map<string, Element[]>();
  const add = (v: string | null, e: Element): void => {
    if (!v) return;
    const list = index.get(v);
    if (!list) index.set(v, [e]);
    else if (list[list.length - 1] !== e) list.push(e);
  };
  const visit = (e: Element): void => {
    add(e.getAttribute('Id'), e);
    add(e.getAttribute('ID'), e);
    add(e.getAttribute('id'), e);
    for (let ch = e.firstChild; ch; ch = ch.nextSibling) if (ch.nodeType === 1) visit(ch as Element);
  };
  if (doc.documentElement) visit(doc.documentElement);
  return index;
}

/** Removes every comment under `node`, except under `keep`. */
function removeComments(node: Node, keep?: Node): void {
  for (let c = node.firstChild; c; ) {
    const next = c.nextSibling;
    if (c.nodeType === 8) node.removeChild(c);
    else if (c.nodeType === 1 && c !== keep) removeComments(c, keep);
    c = next;
  }
}
