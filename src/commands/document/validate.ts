import type { Ctx } from '../../cli/context.js';
import { SilentExit } from '../../cli/errors.js';
import { findingText, invalidHeadline } from '../../cli/findings.js';
import { encodingFlag, readJson, writeLine } from '../../cli/io.js';
import { printJson } from '../../cli/output.js';
import { safeText } from '../../cli/safe-text.js';
import type { Finding } from '../../core/model.js';
import { placeholderIssuer } from '../../core/placeholder-issuer.js';
import { readIssuer } from './issuer-input.js';
import type { ValidateOptions, Verdict } from './shared.js';


export async function run(ctx: Ctx, file: string, opts: ValidateOptions): Promise<void> {
  // A v4.4 document in XML (a .xml file): its XSD and Hacienda's catalogue and date checks (validate-xml.ts).
  if (/\.xml$/i.test(file)) return report(ctx, opts, await (await import('./validate-xml.js')).validateXml(ctx, file, opts));
  const read = await readJson(ctx.io, file, { encoding: encodingFlag(opts.encoding), encodingFlag: true });
  const issuer = opts.issuer ? await readIssuer(ctx, opts.issuer) : placeholderIssuer(read);
  const [{ parseDocument }, { completedInput }] = await Promise.all([import('../../core/document.js'), import('../../core/input/complete.js')]);
  // The figures the body leaves out are computed (as fecr send does); with --no-complete it is judged as the API takes it.
  const completed = opts.complete === false ? read : completedInput(read);
  // tipoCambio "auto" (USD): offline, no rate is asked for; judged with a placeholder rate of 1, and a warning.
  const { body, autoRate } = withPlaceholderRate(completed);
  const parsed = parseDocument(body, issuer);
  const findings: Finding[] = [...parsed.findings];
  const autoWarning: Finding[] = autoRate ? [{ path: 'resumenFactura.codigoTipoMoneda.tipoCambio', message: '"auto": judged here with a placeholder rate of 1; fecr send takes Hacienda\'s rate of the document\'s day (fecr tipo-cambio DATE shows it)' }] : [];
  let warnings: Finding[] = autoWarning;
  // Hacienda's catalogue and clock checks, the emulator's own rules (core/rules): -408/-407 activity, -400 CABYS, -53;
  // also on a body with other findings (at the paths that parsed): every finding comes in one run.
  const checks = async () => {
    if (!parsed.doc) return;
    const [{ haciendaChecks }, { readCabysCodes }] = await Promise.all([import('../../core/rules/document-checks.js'), import('../../adapters/cabys-file.js')]);
    const codes = readCabysCodes();
    const r = haciendaChecks(parsed.doc, { now: ctx.now(), hasCabys: (c) => codes.has(c), held: parsed.ok ? [] : parsed.held });
    findings.push(...r.findings);
    warnings = [...autoWarning, ...r.warnings];
  };
  // The XSD judges the XML of a body without findings (one with findings would fail it by the same faults).
  if (parsed.ok && opts.xsd) {
    const { buildComprobanteXml, KINDS } = await import('../../core/xml/build.js');
    const { XmlCharError } = await import('../../core/xml/canonical.js');
    const { createXsdValidator, withPlaceholderSignature } = await import('../../adapters/xsd/index.js');
    let unsigned: string | undefined;
    try {
      unsigned = buildComprobanteXml(parsed.doc, parsed.totals);
    } catch (e) {
      // The schema refuses characters XML cannot carry; should one get this far, it is a finding all the same.
      if (!(e instanceof XmlCharError)) throw e;
      findings.push({ path: 'xml', message: e.message });
    }
    if (unsigned !== undefined) {
      const xml = withPlaceholderSignature(unsigned);
      const xsd = createXsdValidator().validate(xml, KINDS[parsed.doc.kind].schema);
      await checks();
      const [result] = await xsd;
      const first = result && !result.valid ? result.errors[0] : undefined;
      if (first) {
        // Hacienda's -1: the first schema error only, in the words of its validator (Java's Xerces).
        const { xercesError } = await import('../../adapters/xsd/xerces/index.js');
        const x = xercesError(xml, KINDS[parsed.doc.kind].schema, first);
        findings.push({ path: 'xml', message: `-1 ${x.message}` });
      }
    } else await checks();
  } else await checks();
  await report(ctx, opts, {
    findings,
    warnings,
    kind: parsed.doc?.kind,
    clave: parsed.doc?.clave,
    numeroConsecutivo: parsed.doc?.numeroConsecutivo,
    totalComprobante: parsed.totals?.resumen.totalComprobante.toFixed(5),
    moneda: parsed.doc?.moneda.codigoMoneda,
  });
}

/** The body with a USD `tipoCambio: "auto"` replaced by 1 (only "auto": a missing rate stays a finding offline). */
function withPlaceholderRate(body: unknown): { body: unknown; autoRate: boolean } {
  const b = body as { resumenFactura?: { codigoTipoMoneda?: { codigoMoneda?: unknown; tipoCambio?: unknown } } } | null;
  const m = typeof b === 'object' && b !== null && !Array.isArray(b) ? b.resumenFactura?.codigoTipoMoneda : undefined;
  if (typeof m !== 'object' || m === null || m.codigoMoneda !== 'USD' || typeof m.tipoCambio !== 'string' || m.tipoCambio.trim().toLowerCase() !== 'auto') return { body, autoRate: false };
  const r = b!.resumenFactura!;
  return { body: { ...b, resumenFactura: { ...r, codigoTipoMoneda: { ...m, tipoCambio: '1' } } }, autoRate: true };
}

/** Prints a verdict (findings ordered by path, without repeats) and exits 1 when it is not valid. */
export async function report(ctx: Ctx, opts: ValidateOptions, v: Verdict): Promise<void> {
  const { orderFindings } = await import('../../core/input/projection.js');
  const findings = orderFindings(v.findings);
  const warnings = orderFindings(v.warnings);
  const valid = findings.length === 0 && !(opts.strict && warnings.length > 0);
  if (opts.json) {
    printJson(ctx, { valid, kind: v.kind, clave: valid ? v.clave : undefined, totalComprobante: v.totalComprobante, findings, warnings });
  } else if (valid) {
    for (const w of warnings) writeLine(ctx.io.stderr, `warning: ${findingText(w)}`);
    writeLine(ctx.io.stdout, `valid ${v.kind} ${safeText(v.numeroConsecutivo ?? '')} totalComprobante ${v.totalComprobante} ${safeText(v.moneda ?? '')}`);
  } else {
    // The findings are the result (stdout, one `path: message` a line); the headline says what failed (stderr).
    writeLine(ctx.io.stderr, `error: ${invalidHeadline('document', findings.length || warnings.length)}${findings.length ? '' : ' (warnings, with --strict)'}`);
    for (const f of findings) writeLine(ctx.io.stdout, findingText(f));
    for (const w of warnings) writeLine(findings.length ? ctx.io.stderr : ctx.io.stdout, `${findings.length ? 'warning: ' : ''}${findingText(w)}`);
  }
  if (!valid) throw new SilentExit(1);
}
