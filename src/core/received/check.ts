/**
 * The checks of a supplier's comprobante that need nothing but its bytes (issue 16, the buyer's side): UTF-8 and
 * well-formed; a comprobante (FE, ND, NC, FEC; TE and FEE read too) of v4.4, or of v4.3 (read, with fewer checks); its
 * XAdES signature (value, every reference digest, the signing certificate; the policy: an older or unknown one is a
 * warning, never a refusal, as Hacienda accepts them, NOTES §3.3, §6.3); the signing certificate chains to one of the
 * trust anchors the caller passes (sign/chain.ts: a self-signed certificate with the supplier's cédula is no
 * supplier's signature; a refusal, issue 25.2); the signer is the issuer (the Emisor; the
 * Receptor for a FEC, which the buyer issues); the clave agrees with the document; the totals recomputed from the
 * lines (ANEXOS formulas). The XSD, "the receptor is ours" and the state at Hacienda need the outside world: the
 * service does them (service/recibidos/import.ts), with `xsd` and the parties this returns.
 *
 * v4.3 documents (still sent by old systems): well-formedness, the signature, the signer, the clave and the parties
 * apply; the XSD does not (the v4.3 schemas are not shipped) and neither do the v4.4 totals formulas: both are
 * said as warnings, with the fact that Hacienda no longer accepts v4.3 since 2025-09-01.
 */
import { createHash } from 'node:crypto';
import { parseClave } from '../clave.js';
import type { DocumentKind, Finding } from '../model.js';
import { crParts, parseIsoDateTime } from '../dates.js';
import { echo } from '../echo.js';
import { EMPTY_TRUST_STORE, type TrustStore } from '../sign/chain.js';
import { verifyXadesDocument } from '../sign/verify.js';
import type { VerifyReport } from '../sign/verify-report.js';
import { parseXmlDocument } from '../sign/xml-dom.js';
import { kindOfRoot, KINDS, NS_BASE_V43, type SchemaName } from '../xml/kinds.js';
import { parseComprobanteDom } from '../xml/parse-comprobante.js';
import { rawFromDom, Reader } from '../xml/raw-document.js';
import { ivaPorTarifa, receivedFigureFindings, type IvaPorTarifa } from './figures.js';

export type { IvaPorTarifa } from './figures.js';

export interface ReceivedParty {
  tipo: string;
  numero: string;
  nombre: string;
}

/** What the bytes say about a received comprobante, and what is wrong with it. */
export interface ReceivedAnalysis {
  /** sha256 (hex) of the bytes as received: the idempotency key of an import. */
  sha256: string;
  /** The text (UTF-8), when it decodes. */
  text?: string;
  version?: '4.4' | '4.3';
  kind?: DocumentKind;
  clave?: string;
  numeroConsecutivo?: string;
  fechaEmision?: string;
  emisor?: ReceivedParty;
  receptor?: ReceivedParty;
  /** The buyer's side of the document (the Receptor; the Emisor of a FEC): must be one of the account's issuers. */
  buyer?: ReceivedParty;
  moneda?: string;
  tipoCambio?: string;
  totalComprobante?: string;
  totalImpuesto?: string;
  iva: IvaPorTarifa[];
  /** The schema the service validates the text against (v4.4 documents). */
  xsd?: SchemaName;
  /** Refusals: each a failed check with its reason (the path names the XML element or the check). */
  findings: Finding[];
  /** Warnings: worth saying, never a reason to refuse (an older policy, a v4.3 document). */
  warnings: Finding[];
  signature?: Pick<VerifyReport, 'form' | 'policy' | 'signingTime'> & { signer?: string };
}

/** The path of the finding "the signing certificate does not chain to a trusted CA" (sign/chain.ts). */
export const CHAIN_FINDING_PATH = 'ds:Signature (certificate.chain)';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const RECEIVABLE: ReadonlySet<DocumentKind> = new Set(['FE', 'ND', 'NC', 'FEC', 'TE', 'FEE']);

/**
 * Runs every check that needs only the bytes, and the trust anchors the signing certificate must chain to (the
 * service's, service/recibidos/trust.ts; plain data, so it crosses to a worker thread as it is). Without them no
 * certificate is trusted: every signed document is refused (fail closed). Never throws for bad input.
 */
export function analyzeReceived(bytes: Uint8Array, now: Date, trust: TrustStore = EMPTY_TRUST_STORE): ReceivedAnalysis {
  const out: ReceivedAnalysis = { sha256: createHash('sha256').update(bytes).digest('hex'), iva: [], findings: [], warnings: [] };
  const refuse = (path: string, message: string) => out.findings.push({ path, message });
  let text: string;
  try {
    text = utf8.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    refuse('xml', 'not UTF-8 text: not an XML comprobante');
    return out;
  }
  out.text = text;
  if (/<!DOCTYPE/i.test(text)) {
    refuse('xml', 'DOCTYPE declarations are not allowed');
    return out;
  }
  const dom = parseXmlDocument(text);
  if (typeof dom === 'string') {
    refuse('xml', `not well-formed XML: ${dom}`);
    return out;
  }
  const root = dom.documentElement;
  const rootName = root?.localName ?? '';
  const kind = kindOfRoot(rootName);
  if (!root || !kind || !RECEIVABLE.has(kind)) {
    refuse('xml', `not a comprobante electrónico (root element ${rootName || 'none'}; expected FacturaElectronica, NotaDebitoElectronica, NotaCreditoElectronica or FacturaElectronicaCompra)`);
    return out;
  }
  out.kind = kind;
  const ns = root.namespaceURI ?? '';
  if (ns === KINDS[kind].namespace) readV44(out, dom);
  else if (ns === NS_BASE_V43 + rootName.charAt(0).toLowerCase() + rootName.slice(1)) readV43(out, dom);
  else {
    refuse(rootName, `namespace "${echo(ns)}" is neither v4.4 (${KINDS[kind].namespace}) nor v4.3`);
    return out;
  }
  if (!out.clave) return out;

  // The signature (on the same DOM: verify removes comments, so it runs after the reading above).
  const report = verifyXadesDocument(dom, text, now, { crossCheck: false, trust });
  signatureFindings(out, report);
  const signerIssuer = kind === 'FEC' ? out.receptor : out.emisor;
  const signerId = report.signer?.identificacion;
  if (report.signer && signerIssuer && (!signerId || stripZeros(signerId) !== stripZeros(signerIssuer.numero))) {
    refuse(
      'ds:Signature/ds:KeyInfo',
      `signed with the certificate of ${report.signer.subjectSerialNumber ?? report.signer.subject}, not of the ${kind === 'FEC' ? 'Receptor (who issues a FEC)' : 'Emisor'} ${signerIssuer.numero}`,
    );
  }
  claveFindings(out, signerIssuer?.numero);
  return out;
}

function readV44(out: ReceivedAnalysis, dom: Document): void {
  let doc;
  try {
    doc = parseComprobanteDom(dom);
  } catch (e) {
    out.findings.push({ path: dom.documentElement?.localName ?? 'xml', message: `cannot be read as a v4.4 comprobante: ${e instanceof Error ? e.message : String(e)}` });
    return;
  }
  out.version = '4.4';
  out.xsd = KINDS[doc.kind].schema;
  out.clave = doc.clave;
  out.numeroConsecutivo = doc.numeroConsecutivo;
  out.fechaEmision = doc.fechaEmision;
  out.emisor = { tipo: doc.emisor.identificacion.tipo, numero: doc.emisor.identificacion.numero, nombre: doc.emisor.nombre };
  if (doc.receptor?.identificacion) out.receptor = { tipo: doc.receptor.identificacion.tipo, numero: doc.receptor.identificacion.numero, nombre: doc.receptor.nombre };
  out.buyer = doc.kind === 'FEC' ? out.emisor : out.receptor;
  out.moneda = doc.resumen.codigoMoneda;
  out.tipoCambio = doc.resumen.tipoCambio;
  out.totalComprobante = doc.resumen.totalComprobante;
  out.totalImpuesto = doc.resumen.totalImpuesto ?? '0';
  try {
    out.iva = ivaPorTarifa(doc);
  } catch {
    out.iva = []; // a figure that is not a number: the totals check below and the XSD say so
  }
  out.findings.push(...receivedFigureFindings(doc));
}

function readV43(out: ReceivedAnalysis, dom: Document): void {
  const raw = rawFromDom(dom);
  const r = new Reader(raw.body, `/${raw.rootName}`);
  try {
    const party = (p: Reader | undefined): ReceivedParty | undefined => {
      const id = p?.child('Identificacion');
      return p && id ? { tipo: id.req('Tipo'), numero: id.req('Numero'), nombre: p.req('Nombre') } : undefined;
    };
    out.version = '4.3';
    out.clave = r.req('Clave');
    out.numeroConsecutivo = r.req('NumeroConsecutivo');
    out.fechaEmision = r.req('FechaEmision');
    const emisor = party(r.reqChild('Emisor'));
    if (emisor) out.emisor = emisor;
    const receptor = party(r.child('Receptor'));
    if (receptor) out.receptor = receptor;
    out.buyer = out.kind === 'FEC' ? out.emisor : out.receptor;
    const resumen = r.reqChild('ResumenFactura');
    const moneda = resumen.child('CodigoTipoMoneda');
    out.moneda = moneda?.opt('CodigoMoneda') ?? 'CRC';
    out.tipoCambio = moneda?.opt('TipoCambio') ?? '1';
    out.totalComprobante = resumen.req('TotalComprobante');
    out.totalImpuesto = resumen.opt('TotalImpuesto') ?? '0';
  } catch (e) {
    out.findings.push({ path: raw.rootName, message: `cannot be read as a v4.3 comprobante: ${e instanceof Error ? e.message : String(e)}` });
    return;
  }
  out.warnings.push(
    { path: 'version', message: 'v4.3 document: Hacienda no longer accepts v4.3 since 2025-09-01; read with the signature, signer, clave and receptor checks' },
    { path: 'xsd', message: 'v4.3 document: not validated against an XSD (fecr ships the v4.4 schemas only)' },
    { path: 'ResumenFactura', message: 'v4.3 document: totals not recomputed (the v4.4 formulas do not apply)' },
  );
}

function signatureFindings(out: ReceivedAnalysis, report: VerifyReport): void {
  out.signature = {
    ...(report.form ? { form: report.form } : {}),
    ...(report.policy ? { policy: report.policy } : {}),
    ...(report.signingTime ? { signingTime: report.signingTime } : {}),
    ...(report.signer ? { signer: report.signer.subjectSerialNumber ?? report.signer.subject } : {}),
  };
  if (report.form === 'XMLDSig') out.findings.push({ path: 'ds:Signature', message: 'an XMLDSig signature without XAdES properties (Hacienda requires XAdES-EPES)' });
  for (const c of report.checks) {
    if (c.ok || c.name === 'xml.wellFormed') continue;
    if (c.name === 'xades.policy') {
      out.warnings.push({ path: 'ds:Signature/xades:SignaturePolicyIdentifier', message: `signature policy: ${c.detail} (Hacienda accepts other policies: a warning only)` });
      continue;
    }
    if (c.name === 'xades.qualifyingProperties' || (c.name === 'xades.signingCertificate' && report.form === 'XMLDSig')) continue;
    out.findings.push({ path: `ds:Signature (${c.name})`, message: c.detail });
  }
  if (report.form === 'XAdES-BES') out.warnings.push({ path: 'ds:Signature/xades:SignaturePolicyIdentifier', message: 'XAdES-BES: the signature names no policy' });
  for (const n of report.notes) out.warnings.push({ path: 'ds:Signature', message: n });
}

function claveFindings(out: ReceivedAnalysis, issuerNumero: string | undefined): void {
  const parts = parseClave(out.clave!);
  if (!parts) {
    out.findings.push({ path: 'Clave', message: `"${echo(out.clave!)}" is not a clave numérica` });
    return;
  }
  if (issuerNumero !== undefined && stripZeros(parts.identificacion) !== stripZeros(issuerNumero)) {
    out.findings.push({ path: 'Clave', message: `its identificación ${parts.identificacion} is not the issuer's ${issuerNumero}` });
  }
  if (parts.consecutivo !== out.numeroConsecutivo) out.findings.push({ path: 'NumeroConsecutivo', message: `${echo(String(out.numeroConsecutivo))} is not the clave's consecutivo ${parts.consecutivo}` });
  const fecha = out.fechaEmision ? parseIsoDateTime(out.fechaEmision) : null;
  if (!fecha) out.findings.push({ path: 'FechaEmision', message: `"${echo(String(out.fechaEmision))}" is not a date-time` });
  else {
    const p = crParts(fecha);
    if (p.day !== parts.day || p.month !== parts.month || p.year % 100 !== parts.year2) out.findings.push({ path: 'FechaEmision', message: "its date (Costa Rica) is not the clave's" });
  }
  const tipo = out.numeroConsecutivo?.slice(8, 10);
  if (out.kind && tipo !== KINDS[out.kind].tipoComprobante) out.findings.push({ path: 'NumeroConsecutivo', message: `tipo ${tipo} is not a ${out.kind} (${KINDS[out.kind].tipoComprobante})` });
}

function stripZeros(s: string): string {
  return s.replace(/^0+/, '');
}
