/**
 * What `fecr test` writes for CI: a JUnit XML report and GitHub Actions annotations.
 *
 * JUnit: the layout Jenkins, GitLab, GitHub test-report actions and junit2json read: `<testsuites>` with one
 * `<testsuite>` per body file and one `<testcase>` per document (classname the file, name the case, `file` and `line`
 * the body), a `<failure>` for an expectation that does not hold (message: why; text: expected and got, the clave,
 * Hacienda's list or fecr's findings) and `<system-out>` with the same details for every case. Built with the element
 * tree of core/xml/canonical.ts, which escapes every text and attribute value; a character XML cannot carry (a C0
 * control in a body's text) is written as U+FFFD.
 *
 * Annotations: `::error file=F,line=L,title=T::MESSAGE`, escaped by GitHub's workflow command rules (the runner's
 * toCommandValue/escapeData/escapeProperty): `%`, CR and LF in the message; `%`, CR, LF, `:` and `,` in a property.
 */
import { el, serialize, type XmlElement } from '../../core/xml/canonical.js';
import { codesOf, describeExpectation, describeOutcome } from './expectations.js';
import type { CaseResult, TestSummary } from './run.js';

/** The JUnit XML of a run (with its XML declaration and a final newline). */
export function junitXml(summary: TestSummary, opts: { name?: string; timestamp?: Date } = {}): string {
  const files = new Map<string, CaseResult[]>();
  for (const r of summary.results) {
    const list = files.get(r.case.file) ?? [];
    list.push(r);
    files.set(r.case.file, list);
  }
  const suites: XmlElement[] = [];
  for (const [file, results] of files) {
    const failures = results.filter((r) => r.problems.length > 0).length;
    const time = results.reduce((t, r) => t + r.seconds, 0);
    suites.push(
      el(
        'testsuite',
        {
          name: clean(file),
          tests: String(results.length),
          failures: String(failures),
          errors: '0',
          skipped: '0',
          time: seconds(time),
          ...(opts.timestamp ? { timestamp: opts.timestamp.toISOString().replace(/\.\d+Z$/, '') } : {}),
        },
        results.map(testcase),
      ),
    );
  }
  const root = el(
    'testsuites',
    { name: clean(opts.name ?? 'fecr test'), tests: String(summary.total), failures: String(summary.failed), errors: '0', time: seconds(summary.seconds) },
    suites,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n${indent(serialize(root))}\n`;
}

function testcase(r: CaseResult): XmlElement {
  const details = detailLines(r).join('\n');
  return el(
    'testcase',
    { classname: clean(r.case.file), name: clean(r.case.name), file: clean(r.case.file), line: String(r.case.line), time: seconds(r.seconds) },
    r.problems.length > 0 ? el('failure', { message: clean(r.problems.join('; ')), type: 'expectation' }, clean(details)) : undefined,
    el('system-out', clean(details)),
  );
}

/** Expected, got, the clave, then Hacienda's items or fecr's findings, one a line. */
export function detailLines(r: CaseResult): string[] {
  const o = r.outcome;
  const lines = [`expected: ${describeExpectation(r.case.expect)}${r.case.expectFrom ? ` (${r.case.expectFrom})` : ''}`, `got: ${describeOutcome(o)}`];
  if (o.clave) lines.push(`clave: ${o.clave}`);
  for (const e of o.errores) lines.push(`${e.aviso ? 'aviso' : o.estado}: ${e.codigo ?? ''} ${e.mensaje}`.replace(/ {2,}/g, ' '));
  // A refusal's headline without a path ("Campos requeridos faltantes") only when it is alone.
  const findings = o.findings.some((f) => f.path !== '') ? o.findings.filter((f) => f.path !== '') : o.findings;
  for (const f of findings) lines.push(`${f.path ? `${f.path}: ` : ''}${f.message}`);
  if (o.failure) lines.push(o.failure);
  return lines;
}

/** The codes of a result line: `-53 aviso -407`, or fecr's finding paths for a refused body. */
export function codesText(r: CaseResult): string {
  const { codigos, avisos } = codesOf(r.outcome);
  if (r.outcome.estado === 'invalido') return r.outcome.findings.map((f) => f.path).filter((p) => p !== '').slice(0, 3).join(' ');
  return [...codigos.map(String), ...avisos.map((a) => `aviso ${a}`)].join(' ');
}

function seconds(s: number): string {
  return s.toFixed(3);
}

/** A character XML 1.0 cannot carry (C0 controls but TAB, LF, CR; U+FFFE/FFFF; lone surrogates), as U+FFFD. */
function clean(s: string): string {
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** One element a line (the canonical writer writes none): a tag that follows a closing tag starts a line, indented. */
function indent(xml: string): string {
  let depth = 0;
  return xml.replace(/<(\/?)(testsuites|testsuite|testcase)\b([^>]*)>|<(failure|system-out)\b/g, (m, close: string, name: string | undefined, _rest: string, leaf: string | undefined) => {
    if (leaf) return `\n${'  '.repeat(depth)}${m}`;
    if (close) {
      depth--;
      return `\n${'  '.repeat(depth)}${m}`;
    }
    const out = `${depth === 0 ? '' : '\n'}${'  '.repeat(depth)}${m}`;
    depth++;
    return out;
  });
}

/** The GitHub Actions annotation of a failed case: `::error file=…,line=…,title=…::message`. */
export function githubAnnotation(r: CaseResult): string {
  const title = `fecr test: ${r.case.where}`;
  const message = [...r.problems, ...(r.outcome.clave ? [`clave ${r.outcome.clave}`] : [])].join('\n');
  return `::error file=${escapeProperty(r.case.file)},line=${r.case.line},title=${escapeProperty(title)}::${escapeData(message)}`;
}

/** A workflow command's message: `%`, CR and LF escaped. */
export function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value: as a message, and `:` and `,` too. */
export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
