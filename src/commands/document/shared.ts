/** What the document verbs share: the options and the verdict of `fecr validate` (a JSON body or a v4.4 XML file). */
import type { Finding } from '../../core/model.js';

export interface ValidateOptions {
  issuer?: string;
  json?: boolean;
  xsd: boolean;
  strict?: boolean;
  encoding?: string;
  /** false (--no-complete): every figure must be in the body, as the client API wants it without ?completar=1. */
  complete?: boolean;
}

/** What a validation found, body or XML, as `report` prints it. */
export interface Verdict {
  findings: Finding[];
  warnings: Finding[];
  kind?: string;
  clave?: string;
  numeroConsecutivo?: string;
  totalComprobante?: string;
  moneda?: string;
}
