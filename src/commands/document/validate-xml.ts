/**
 * `fecr validate FILE.xml`: a v4.4 comprobante in XML judged as Hacienda would, offline: the XSD of its kind (an
 * unsigned document gets a placeholder signature; the first error as Hacienda's -1, in its validator's words) and,
 * independently of it, Hacienda's catalogue and date checks (-408/-407 activity, -400 CABYS, -53) on what the XML
 * says, at its element paths. The one does not hide the other: both come in one run.
 */
import type { Ctx } from '../../cli/context.js';
import { readInput } from '../../cli/io.js';
import type { Finding } from '../../core/model.js';
import type { ParsedComprobante } from '../../core/xml/parse-comprobante.js';
import type { ValidateOptions, Verdict } from './shared.js';

export async function validateXml(ctx: Ctx, file: string, opts: ValidateOptions): Promise<Verdict> {
  const xml = (await readInput(ctx.io, file)).toString('utf8').replace(/^\uFEFF/, '');
  const [{ kindOfRoot, KINDS }, { parseComprobanteXml }, { XmlParseError }] = await Promise.all([
    import('../../core/xml/kinds.js'),
    import('../../core/xml/parse-comprobante.js'),
    import('../../core/xml/raw-document.js'),
  ]);
  const findings: Finding[] = [];
  let warnings: Finding[] = [];
  const root = /^\s*(?:<\?[^?]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(xml)?.[1] ?? '';
  const kind = kindOfRoot(root);
  if (!kind) return { findings: [{ path: 'xml', message: 'the root element is not a v4.4 comprobante (FacturaElectronica, TiqueteElectronico, …)' }], warnings };

  let doc: ParsedComprobante | undefined;
  let unreadable: string | undefined;
  try {
    doc = parseComprobanteXml(xml);
  } catch (e) {
    if (!(e instanceof XmlParseError)) throw e;
    unreadable = e.message;
  }
  if (doc) {
    const [{ haciendaChecks, XML_PATHS }, { readCabysCodes }] = await Promise.all([import('../../core/rules/document-checks.js'), import('../../adapters/cabys-file.js')]);
    const codes = readCabysCodes();
    const r = haciendaChecks(doc, { now: ctx.now(), hasCabys: (c) => codes.has(c), paths: XML_PATHS });
    findings.push(...r.findings);
    warnings = r.warnings;
  }
  if (opts.xsd) {
    const { createXsdValidator, withPlaceholderSignature } = await import('../../adapters/xsd/index.js');
    const schema = KINDS[kind].schema;
    const judged = /<(?:[A-Za-z_][\w.-]*:)?Signature[\s>]/.test(xml) ? xml : withPlaceholderSignature(xml);
    const [result] = await createXsdValidator().validate(judged, schema);
    const first = result && !result.valid ? result.errors[0] : undefined;
    if (first) {
      // Hacienda's -1: the first schema error only, in the words of its validator (Java's Xerces).
      const { xercesError } = await import('../../adapters/xsd/xerces/index.js');
      findings.push({ path: 'xml', message: `-1 ${xercesError(judged, schema, first).message}` });
    }
  }
  // What the checks read is not there (or not well-formed): the XSD's finding says why, else this one.
  if (unreadable !== undefined && !findings.some((f) => f.path === 'xml')) findings.push({ path: 'xml', message: unreadable });
  return {
    findings,
    warnings,
    kind,
    clave: doc?.clave,
    numeroConsecutivo: doc?.numeroConsecutivo,
    totalComprobante: doc?.resumen.totalComprobante,
    moneda: doc?.resumen.codigoMoneda,
  };
}
