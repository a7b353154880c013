/**
 * Who issues a comprobante: the obligado tributario who signs it, sends it to Hacienda (the POST's `emisor`) and whose
 * cédula is in its clave. That is the Emisor of every kind but the factura electrónica de compra, which the buyer
 * issues: there the issuer is the Receptor and the seller the Emisor (ANEXOS v4.4 p.59, "debe ser firmada por el
 * Receptor que es quien la emite y la envía").
 */
import type { DocumentKind } from './model.js';

interface Id {
  tipo: string;
  numero: string;
}

export interface Parties {
  /** The party that issues, signs and sends the document. */
  issuer?: Id;
  /** The other party (the POST's `receptor`), when the document names one. */
  counterpart?: Id;
}

export function partiesOf(doc: { kind: DocumentKind; emisor: { identificacion: Id }; receptor?: { identificacion?: Id } }): Parties {
  const emisor = doc.emisor.identificacion;
  const receptor = doc.receptor?.identificacion;
  return doc.kind === 'FEC' ? { issuer: receptor, counterpart: emisor } : { issuer: emisor, counterpart: receptor };
}
