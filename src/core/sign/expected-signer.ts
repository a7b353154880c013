/**
 * Who must have signed a document, and whether its signer did (issue 37.3). A signature that verifies proves only
 * that the holder of the certificate's key signed; the document says who that must be:
 *
 * - a comprobante: its issuer (core/parties.ts), the Emisor, but for a factura electrónica de compra the Receptor
 *   (ANEXOS v4.4 p.59, ds:Signature: "En caso de la Factura de Compra la misma debe de ser firmada por el Receptor
 *   que es quien la emite y la envía al validador"), by the identificación of the certificate's subject serialNumber;
 * - a MensajeReceptor: the Receptor who sends it (NumeroCedulaReceptor; ANEXOS v4.4 p.59: every XML is signed by the
 *   one who generates it);
 * - a MensajeHacienda: Hacienda's seal, `ESTADO-MINISTERIO DE HACIENDA (SELLO ELECTRONICO)` in production, issued by
 *   CA SINPE - PERSONA JURIDICA v2 (NOTES §6.3), `MINISTERIO DE HACIENDA (SELLO ELECTRONICO)(PRUEBAS)` in the sandbox
 *   (NOTES §3.4); a certificate so named that also chains to a trust anchor (the caller's store: ./chain.ts, check
 *   `certificate.chain`). A name alone proves nothing (anyone can make a self-signed "MINISTERIO DE HACIENDA").
 *
 * Also what the archive's manifest says of a file, read from the signed XML (`signedFacts`). Pure: no I/O.
 */
import { partiesOf } from '../parties.js';
import { parseComprobanteDom, parseComprobanteXml } from '../xml/parse-comprobante.js';
import { parseMensajeDom, parseMensajeXml } from '../xml/parse-mensaje.js';
import { kindOfRoot } from '../xml/kinds.js';
import type { VerifyCheck, VerifyReport } from './verify-report.js';

/** The seal's common name, production and sandbox (NOTES §6.3, §3.4); fecr's local emulator adds "(EMULADOR FECR)". */
export const HACIENDA_SEAL_CN = /MINISTERIO DE HACIENDA \(SELLO ELECTRONICO\)/;
/** The sandbox's seal (NOTES §3.4: `MINISTERIO DE HACIENDA (SELLO ELECTRONICO)(PRUEBAS)`, a real sandbox response). */
export const SANDBOX_SEAL_CN = /MINISTERIO DE HACIENDA \(SELLO ELECTRONICO\)\s*\(PRUEBAS\)/;

/** What a signed XML says, as the archive's manifest repeats it. */
export type SignedFacts =
  | {
      type: 'comprobante';
      kind: string;
      clave: string;
      fechaEmision: string;
      totalComprobante: string;
      totalImpuesto: string | null;
      moneda: string;
      /** Who issues, signs and sends it (core/parties.ts). */
      issuer?: string;
      issuerRole: string;
    }
  | { type: 'MensajeHacienda'; clave: string; mensaje: 1 | 2 | 3 }
  | { type: 'MensajeReceptor'; clave: string; mensaje: 1 | 2 | 3; issuer: string; issuerRole: string };

/** The root element's local name (before any parse), or '' when none. */
export function rootNameOf(xml: string): string {
  return /^\s*(?:<\?[^?]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(xml.replace(/^\uFEFF/, ''))?.[1] ?? '';
}

/**
 * The facts of a comprobante, MensajeHacienda or MensajeReceptor; a string saying why when it cannot be read. From
 * the text, or from its DOM (parseXmlDocument) when the caller verifies on that DOM too (read it before: verify
 * removes comments): one parse of a large file instead of two.
 */
export function signedFacts(xml: string | Document): SignedFacts | string {
  const root = typeof xml === 'string' ? rootNameOf(xml) : (xml.documentElement?.localName ?? '');
  try {
    if (kindOfRoot(root)) {
      const c = typeof xml === 'string' ? parseComprobanteXml(xml) : parseComprobanteDom(xml);
      const issuer = partiesOf({ kind: c.kind, emisor: c.emisor, ...(c.receptor ? { receptor: c.receptor } : {}) }).issuer;
      return {
        type: 'comprobante',
        kind: c.kind,
        clave: c.clave,
        fechaEmision: c.fechaEmision,
        totalComprobante: c.resumen.totalComprobante,
        totalImpuesto: c.resumen.totalImpuesto ?? null,
        moneda: c.resumen.codigoMoneda || 'CRC',
        ...(issuer ? { issuer: issuer.numero } : {}),
        issuerRole: c.kind === 'FEC' ? 'Receptor (who issues a FEC)' : 'Emisor',
      };
    }
    if (root === 'MensajeHacienda' || root === 'MensajeReceptor') {
      const m = typeof xml === 'string' ? parseMensajeXml(xml) : parseMensajeDom(xml);
      if (m.type === 'MensajeHacienda') return { type: 'MensajeHacienda', clave: m.clave, mensaje: m.mensaje };
      return { type: 'MensajeReceptor', clave: m.clave, mensaje: m.mensaje, issuer: m.numeroCedulaReceptor, issuerRole: 'Receptor (who sends the MensajeReceptor)' };
    }
    return `the root element ${root || '(none)'} is not a comprobante, MensajeHacienda or MensajeReceptor`;
  } catch (e) {
    return `cannot be read: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function stripZeros(s: string): string {
  return s.replace(/^0+/, '');
}

/**
 * The check `signer.party`: the signer is who must sign `facts`. For a MensajeHacienda the report must come from a
 * verification with a trust store (its `anchor` set when the certificate chains); without one it fails.
 */
export function signerPartyCheck(facts: SignedFacts, report: VerifyReport): VerifyCheck {
  const name = 'signer.party';
  const signer = report.signer;
  if (!signer) return { name, ok: false, detail: 'no readable signing certificate' };
  const who = signer.subjectSerialNumber ?? signer.subject;
  if (facts.type === 'MensajeHacienda') {
    if (!HACIENDA_SEAL_CN.test(signer.subject)) return { name, ok: false, detail: `a MensajeHacienda signed by ${signer.subject}, not by Hacienda's seal (MINISTERIO DE HACIENDA (SELLO ELECTRONICO))` };
    if (!report.anchor) return { name, ok: false, detail: `a certificate named as Hacienda's seal that does not chain to a trust anchor: ${signer.subject}` };
    return { name, ok: true, detail: `Hacienda's seal, through the trust anchor ${report.anchor.name} (${report.anchor.source})` };
  }
  if (!facts.issuer) return { name, ok: false, detail: `the document names no ${facts.issuerRole} to compare the signer with` };
  if (!signer.identificacion || stripZeros(signer.identificacion) !== stripZeros(facts.issuer)) {
    return { name, ok: false, detail: `signed with the certificate of ${who}, not of the ${facts.issuerRole} ${facts.issuer}` };
  }
  return { name, ok: true, detail: `the ${facts.issuerRole} ${facts.issuer} signed it` };
}
