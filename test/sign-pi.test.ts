// Processing instructions in the signed content (found with issue 25, point 4): C14N writes a PI as
// `<?target data?>`, xml-crypto 6 wrote only its data, as if it were text. So a signed value could be split into a
// PI and text (`<TotalComprobante>105939.19500</…>` → `<TotalComprobante><?x 1?>05939.19500</…>`, read as
// 5939.19500) and fecr's verifier still found the signature valid, where xmlsec1 finds a digest mismatch; and a
// document signed elsewhere with a PI inside never verified. fecr's canonicalizers now write PIs as C14N does.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadP12 } from '../src/core/sign/p12.js';
import { verifyXades, verifyXadesDocument } from '../src/core/sign/verify.js';
import { signXmlDocument } from '../src/core/sign/xades.js';
import { parseXmlDocument } from '../src/core/sign/xml-dom.js';
import { formatCr } from '../src/core/dates.js';
import { MemoryStore } from '../src/emulator/store.js';
import { SupplierBook, supplierComprobante, TEST_SUPPLIERS } from '../src/emulator/suppliers.js';
import { validInvoice } from './helpers/bodies.js';
import { issueSigned } from './helpers/issue.js';
import { makeTestIssuer } from './helpers/issuer.js';
import { templateDocument, xmlsecSign, type Shape } from './helpers/xmlsec-sign.js';
import { xmlsecVerify } from './helpers/xmlsec.js';

const t = makeTestIssuer();

function verdicts(xml: string): { fecr: string[]; fecrDom: string[]; xmlsec: boolean } {
  const now = new Date();
  const failed = (r: ReturnType<typeof verifyXades>) => r.checks.filter((c) => !c.ok && /^(xml|reference|signature\.value|xmldsig)/.test(c.name)).map((c) => `${c.name}: ${c.detail}`);
  const dom = parseXmlDocument(xml);
  return {
    fecr: failed(verifyXades(xml, now)),
    fecrDom: typeof dom === 'string' ? [dom] : failed(verifyXadesDocument(dom, xml, now, { crossCheck: false })),
    xmlsec: xmlsecVerify(xml).ok,
  };
}

describe('a signed value split into a processing instruction and text', () => {
  const signed = issueSigned(validInvoice(), t).xml;
  const split = (element: string) => {
    const m = new RegExp(`<${element}>(.)([^<]*)</${element}>`).exec(signed)!;
    return signed.replace(m[0], `<${element}><?x ${m[1]}?>${m[2]}</${element}>`);
  };

  for (const element of ['TotalComprobante', 'Numero', 'Detalle']) {
    it(`${element}: fecr's verifier and xmlsec1 both refuse it`, () => {
      const v = verdicts(split(element));
      expect(v.xmlsec).toBe(false);
      expect(v.fecr.join('\n')).toMatch(/reference\[0\]: URI="" \(document\): digest mismatch/);
      expect(v.fecrDom.join('\n')).toMatch(/reference\[0\]: URI="" \(document\): digest mismatch/);
    });
  }
});

describe('a document signed by another signer with processing instructions inside: both valid', () => {
  const book = new SupplierBook(new MemoryStore(), Date.now);
  const supplier = TEST_SUPPLIERS[0]!;
  const p = book.p12(supplier);
  const creds = loadP12(p.p12, p.pin, new Date());
  const unsigned = supplierComprobante({ receptor: { tipo: '02', numero: '3101123456' }, kind: 'FE' }, supplier, 77, new Date())
    .unsignedXml.replace('<Clave>', '<?fecr-test uno dos ?><Clave>')
    .replace(/<Detalle>([^<]*)<\/Detalle>/, '<Detalle>$1<?x?></Detalle>');
  const shapes: Record<string, Shape> = {
    'exclusive C14N, enveloped': { c14n: 'exc', docTransform: 'enveloped', keyInfoReference: false, certDigest: 'sha256', signingTime: formatCr(new Date()), policy: 'v4.4' },
    'inclusive C14N, three references': { c14n: 'inc', docTransform: 'enveloped', docC14nTransform: false, keyInfoReference: true, keyValue: true, certDigest: 'sha256', signingTime: formatCr(new Date()), policy: 'v4.4' },
    'XPath filter, exclusive C14N with comments': { c14n: 'excWithComments', docTransform: 'xpath', keyInfoReference: false, certDigest: 'sha1', signingTime: formatCr(new Date()), policy: 'v4.4', haciendaIds: true },
  };
  for (const [name, shape] of Object.entries(shapes)) {
    it(name, () => {
      const signed = xmlsecSign(templateDocument(unsigned, shape, creds), creds);
      expect(signed).toContain('<?fecr-test uno dos ?>');
      expect(verdicts(signed)).toEqual({ fecr: [], fecrDom: [], xmlsec: true });
    });
  }
});

describe('signXmlDocument (xml-crypto) on XML with processing instructions', () => {
  it('writes a signature xmlsec1 and fecr both find valid', () => {
    const foreign = '<?xml version="1.0"?>\r\n<r xmlns="urn:x">\r\n<?pi a\r\nb?><a>uno<?y?>dos</a><![CDATA[x\r\ny]]></r>';
    const signed = signXmlDocument(foreign, t.creds, { signingTime: new Date(), newId: () => randomBytes(8).toString('hex') });
    expect(verdicts(signed)).toEqual({ fecr: [], fecrDom: [], xmlsec: true });
  });
});
