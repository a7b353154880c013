/**
 * Canonicalization for signature verification, with xml-crypto's canonicalizers: the four C14N algorithms, the
 * common transform chains run directly on the DOM, the namespaces an element inherits for inclusive C14N (the root's
 * default namespace included), and the XPath filter Hacienda's own signer uses.
 */
import {
  C14nCanonicalization,
  C14nCanonicalizationWithComments,
  ExclusiveCanonicalization,
  ExclusiveCanonicalizationWithComments,
} from 'xml-crypto';
import { ALG_ENVELOPED, ALG_EXC_C14N, NS_DS } from './policy.js';

export const ALG_XPATH = 'http://www.w3.org/TR/1999/REC-xpath-19991116';
export const XPATH_NOT_SIGNATURE = 'not(ancestor-or-self::ds:Signature)';

/**
 * The XPath transform Hacienda's own signer uses (`not(ancestor-or-self::ds:Signature)`, as in the Anexo 2
 * example): drops every ds:Signature. Registered only after checking each XPath transform has exactly that
 * expression.
 */
export class XPathNotSignatureTransform {
  includeComments = false;
  process(node: Node): Node {
    const el = node as Element;
    const found = el.getElementsByTagNameNS ? Array.from(el.getElementsByTagNameNS(NS_DS, 'Signature')) : [];
    for (const s of found) s.parentNode?.removeChild(s);
    return node;
  }
  getAlgorithmName(): string {
    return ALG_XPATH;
  }
}

export const ALG_C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
export const ALG_C14N_WITH_COMMENTS = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments';
export const ALG_EXC_C14N_WITH_COMMENTS = 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments';

/**
 * A processing instruction as C14N writes it: `<?target data?>` (`<?target?>` without data). xml-crypto 6 writes
 * only its data, as if it were text, so `<Total><?x 1?>05</Total>` and the signed `<Total>105</Total>` had the
 * same digest: a signed value could be changed without breaking the signature (and a document signed elsewhere
 * with a PI never verified).
 */
function renderPi(node: Node): string | undefined {
  if (node?.nodeType !== 7) return undefined;
  const pi = node as ProcessingInstruction;
  return `<?${pi.target}${pi.data ? ` ${pi.data}` : ''}?>`;
}

// xml-crypto's four canonicalizers, with processing instructions rendered (processInner recurses through `this`).
class C14n extends C14nCanonicalization {
  override processInner(...a: Parameters<C14nCanonicalization['processInner']>): string {
    return renderPi(a[0]) ?? super.processInner(...a);
  }
}
class C14nWithComments extends C14nCanonicalizationWithComments {
  override processInner(...a: Parameters<C14nCanonicalization['processInner']>): string {
    return renderPi(a[0]) ?? super.processInner(...a);
  }
}
class ExcC14n extends ExclusiveCanonicalization {
  override processInner(...a: Parameters<ExclusiveCanonicalization['processInner']>): string {
    return renderPi(a[0]) ?? super.processInner(...a);
  }
}
class ExcC14nWithComments extends ExclusiveCanonicalizationWithComments {
  override processInner(...a: Parameters<ExclusiveCanonicalization['processInner']>): string {
    return renderPi(a[0]) ?? super.processInner(...a);
  }
}

/** The four C14N algorithms, each with its canonicalizer (xml-crypto's, processing instructions rendered). */
export const C14N_ALGORITHMS: Record<string, { exclusive: boolean; create: () => C14nCanonicalization | ExclusiveCanonicalization }> = {
  [ALG_C14N]: { exclusive: false, create: () => new C14n() },
  [ALG_C14N_WITH_COMMENTS]: { exclusive: false, create: () => new C14nWithComments() },
  [ALG_EXC_C14N]: { exclusive: true, create: () => new ExcC14n() },
  [ALG_EXC_C14N_WITH_COMMENTS]: { exclusive: true, create: () => new ExcC14nWithComments() },
};

/** Makes a SignedXml (signing, or the generic verification path and the cross-check) use the canonicalizers above. */
export function useC14nWithPis(sx: { CanonicalizationAlgorithms: Record<string, unknown> }): void {
  sx.CanonicalizationAlgorithms[ALG_C14N] = C14n;
  sx.CanonicalizationAlgorithms[ALG_C14N_WITH_COMMENTS] = C14nWithComments;
  sx.CanonicalizationAlgorithms[ALG_EXC_C14N] = ExcC14n;
  sx.CanonicalizationAlgorithms[ALG_EXC_C14N_WITH_COMMENTS] = ExcC14nWithComments;
}

/**
 * The common transform chains, run directly on the DOM: [enveloped-signature?, one of the four C14N]. xml-crypto's
 * generic path deep-clones the document and runs XPath for every reference, which dominates the cost of a
 * verification; here the enveloped signature is detached for the duration instead. Other chains
 * (e.g. Hacienda's XPath transform) return undefined and take the generic path.
 */
export function canonicalizeDirect(transforms: readonly string[], node: Node, signature: Element): string | undefined {
  let chain = [...transforms];
  const enveloped = chain[0] === ALG_ENVELOPED;
  if (enveloped) chain = chain.slice(1);
  if (chain.length === 0) chain = [ALG_C14N]; // a node-set left at the end is converted with inclusive C14N
  if (chain.length !== 1) return undefined;
  const c14n = C14N_ALGORITHMS[chain[0]!];
  if (!c14n) return undefined;
  const element = node as Element;
  if (enveloped && signature.parentNode !== element) return undefined; // only a signature directly under the target
  const next = signature.nextSibling;
  const parent = signature.parentNode;
  if (enveloped) parent!.removeChild(signature);
  try {
    const options = { defaultNsForPrefix: {}, ancestorNamespaces: c14n.exclusive ? [] : ancestorNamespaces(element) };
    return String(c14n.create().process(element, options as never));
  } finally {
    if (enveloped) parent!.insertBefore(signature, next);
  }
}

/** Options for xml-crypto's generic path: the ancestors' namespaces when the chain ends in inclusive C14N. */
export function genericOptions(transforms: readonly string[], node: Node): { ancestorNamespaces?: NamespaceBinding[] } {
  const last = transforms[transforms.length - 1];
  const exclusive = last !== undefined && C14N_ALGORITHMS[last]?.exclusive === true;
  return !exclusive && node.nodeType === 1 ? { ancestorNamespaces: ancestorNamespaces(node as Element) } : {};
}

export interface NamespaceBinding {
  prefix: string;
  namespaceURI: string;
}

/**
 * The namespace declarations an element inherits from its ancestors, for inclusive C14N of the subtree it is the
 * apex of (xml-crypto's C14nCanonicalization renders them on the apex). As xml-crypto's own `findAncestorNs`: the
 * nearest binding of each prefix, the default namespace (`xmlns="…"`, prefix "") included; no undeclaration
 * (`xmlns=""`); not the apex's own prefix (rendered anyway) nor the prefixes the apex declares itself. Without
 * the default namespace, the KeyInfo, SignedProperties and SignedInfo of a document whose root declares
 * `xmlns="…"` (every comprobante) canonicalise to other bytes than xmlsec1's, and every inclusive-C14N signature
 * looks broken.
 */
export function ancestorNamespaces(element: Element): NamespaceBinding[] {
  const skip = new Set<string>([element.prefix ?? '']);
  for (let i = 0; i < element.attributes.length; i++) {
    const a = element.attributes[i]!;
    if (a.name === 'xmlns') skip.add('');
    else if (a.name.startsWith('xmlns:')) skip.add(a.name.slice(6));
  }
  const seen = new Map<string, string>();
  for (let p = element.parentNode as Element | null; p && p.nodeType === 1; p = p.parentNode as Element | null) {
    for (let i = 0; i < p.attributes.length; i++) {
      const a = p.attributes[i]!;
      const prefix = a.name === 'xmlns' ? '' : a.name.startsWith('xmlns:') ? a.name.slice(6) : undefined;
      if (prefix !== undefined && !seen.has(prefix)) seen.set(prefix, a.value);
    }
  }
  const out: NamespaceBinding[] = [];
  for (const [prefix, namespaceURI] of seen) if (namespaceURI !== '' && !skip.has(prefix)) out.push({ prefix, namespaceURI });
  return out;
}
