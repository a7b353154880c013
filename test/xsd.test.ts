import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { createTestP12 } from '../src/core/sign/testcert.js';
import { signCanonical } from '../src/core/sign/xades.js';
import { buildComprobanteXml, KINDS } from '../src/core/xml/build.js';
import {
  createXsdValidator,
  SCHEMA_NAMES,
  SCHEMAS,
  schemaPath,
  withPlaceholderSignature,
  XmllintBinaryValidator,
  XmllintWasmValidator,
  type XsdValidator,
} from '../src/adapters/xsd/index.js';
import { parseXmllintOutput } from '../src/adapters/xsd/output.js';
import { ALL_FIXTURES, feFixture, ncFixture, teFixture } from './xml-fixtures.js';

const backends: [string, XsdValidator][] = [
  ['binary', new XmllintBinaryValidator()],
  ['wasm', new XmllintWasmValidator()],
];

const built = (f: ReturnType<typeof feFixture>) => buildComprobanteXml(f.doc, f.totals);

describe('schemas', () => {
  it('locates every vendored XSD relative to the module', () => {
    expect(SCHEMA_NAMES.sort()).toEqual(['FE', 'FEC', 'FEE', 'MH', 'MR', 'NC', 'ND', 'REP', 'TE']);
    for (const name of SCHEMA_NAMES) expect(existsSync(schemaPath(name)), name).toBe(true);
    expect(schemaPath('FEC')).toMatch(/schemas\/xsd\/2026\/v4\.4\/FacturaElectronicaCompra_V4\.4\.xsd$/);
  });
});

describe.each(backends)('XsdValidator (%s)', (_name, v) => {
  it('accepts every fixture kind (with a placeholder signature) against its official XSD', async () => {
    for (const f of ALL_FIXTURES()) {
      const [r] = await v.validate(withPlaceholderSignature(built(f)), KINDS[f.doc.kind].schema);
      expect(r, f.name).toEqual({ valid: true, errors: [] });
    }
  });

  it('reports the missing ds:Signature of an unsigned document', async () => {
    const [r] = await v.validate(built(feFixture()), 'FE');
    expect(r!.valid).toBe(false);
    expect(r!.errors).toHaveLength(1);
    expect(r!.errors[0]!.message).toMatch(/Missing child element.*Signature/);
    expect(r!.errors[0]!.line).toBe(1);
  });

  it('reports XSD violations with readable messages (namespace stripped)', async () => {
    const f = feFixture();
    // The 2026 ClaveType takes letters; a hyphen it does not.
    f.doc.clave = '-' + f.doc.clave.slice(1);
    f.doc.lineas[0]!.unidadMedida = 'unidades';
    const [r] = await v.validate(withPlaceholderSignature(built(f)), 'FE');
    expect(r!.valid).toBe(false);
    const messages = r!.errors.map((e) => e.message);
    expect(messages).toContain(`Element 'Clave': [facet 'pattern'] The value '${f.doc.clave}' is not accepted by the pattern '[a-zA-Z0-9]{50,50}'.`);
    expect(messages.some((m) => m.startsWith("Element 'UnidadMedida': [facet 'enumeration'] The value 'unidades'"))).toBe(true);
  });

  it('reports structural violations: FE without Receptor, NC without InformacionReferencia', async () => {
    const fe = feFixture();
    delete fe.doc.receptor;
    const nc = ncFixture();
    nc.doc.informacionReferencia = [];
    const [a] = await v.validate(withPlaceholderSignature(built(fe)), 'FE');
    expect(a!.errors.map((e) => e.message).join('\n')).toMatch(/Element 'CondicionVenta': This element is not expected. Expected is \( Receptor \)/);
    const [b] = await v.validate(withPlaceholderSignature(built(nc)), 'NC');
    expect(b!.errors.map((e) => e.message).join('\n')).toMatch(/Expected is .*InformacionReferencia/);
  });

  it('validates a batch in one run and maps each result to its document', async () => {
    const good = withPlaceholderSignature(built(teFixture()));
    const docs = Array.from({ length: 100 }, () => good);
    docs[17] = built(teFixture()); // unsigned
    docs[42] = '<TiqueteElectronico><a></TiqueteElectronico>'; // not well-formed
    docs[99] = good.replace('<CondicionVenta>01<', '<CondicionVenta>09<');
    const results = await v.validate(docs, 'TE');
    expect(results).toHaveLength(100);
    const invalid = results.flatMap((r, i) => (r.valid ? [] : [i]));
    expect(invalid).toEqual([17, 42, 99]);
    expect(results[42]!.errors[0]!.message).toMatch(/^XML parser error: /);
    expect(results[99]!.errors[0]!.message).toMatch(/^Element 'CondicionVenta': \[facet 'enumeration'\] The value '09'/);
  });

  it('reports a lone not-well-formed document as invalid rather than failing', async () => {
    const r = await v.validate(['<a><b></a>'], 'MH');
    expect(r).toHaveLength(1);
    expect(r[0]!.valid).toBe(false);
    expect(r[0]!.errors[0]!.message).toMatch(/XML parser error/);
  });

  it('validates a document signed by the XAdES signer', async () => {
    const creds = loadP12(createTestP12({ id: '3101123456', type: '02', pin: '1234' }), '1234', new Date());
    const signed = signCanonical(built(feFixture()), creds, { signingTime: new Date('2025-05-15T16:30:00Z'), newId: () => 'abc123' });
    const [r] = await v.validate(signed, 'FE');
    expect(r).toEqual({ valid: true, errors: [] });
  });

  it('returns [] for no documents and compiles every schema', async () => {
    expect(await v.validate([], 'FE')).toEqual([]);
    for (const name of SCHEMA_NAMES) {
      const [r] = await v.validate(`<${SCHEMAS[name].rootName} xmlns="${SCHEMAS[name].namespace}"/>`, name);
      expect(r!.valid, name).toBe(false);
      expect(r!.errors[0]!.message, name).toMatch(/Missing child element/);
    }
  });
});

describe('parseXmllintOutput', () => {
  it('maps lines to documents, skips parser-error context lines, and flags schema failures', () => {
    const out = [
      "doc-000001.xml:1: element Clave: Schemas validity error : Element '{urn:x}Clave': bad.",
      'doc-000001.xml fails to validate',
      'doc-000002.xml:3: parser error : Premature end of data in tag a line 1',
      '<a><b>',
      '      ^',
      'doc-000003.xml validates',
      '',
    ].join('\n');
    const p = parseXmllintOutput(out, 3, 'urn:x');
    expect(p.complete).toBe(true);
    expect(p.other).toEqual([]);
    expect(p.results).toEqual([
      { valid: false, errors: [{ line: 1, message: "Element 'Clave': bad." }] },
      { valid: false, errors: [{ line: 3, message: 'XML parser error: Premature end of data in tag a line 1' }] },
      { valid: true, errors: [] },
    ]);
    const failed = parseXmllintOutput('x.xsd:5: element import: Schemas parser error : bad import\nWXS schema x.xsd failed to compile\n', 1);
    expect(failed.complete).toBe(false);
    expect(failed.other).toHaveLength(2);
  });
});

describe('createXsdValidator', () => {
  it('prefers the binary when present, wasm on request or when there is no binary', () => {
    expect(createXsdValidator().backend).toBe('binary');
    expect(createXsdValidator({ prefer: 'binary' }).backend).toBe('binary');
    expect(createXsdValidator({ prefer: 'wasm' }).backend).toBe('wasm');
    expect(createXsdValidator({ binary: '/nonexistent/xmllint' }).backend).toBe('wasm');
    expect(() => createXsdValidator({ prefer: 'binary', binary: '/nonexistent/xmllint' })).toThrow(/not available/);
  });
});
