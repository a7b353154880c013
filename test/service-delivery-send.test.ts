// The send job's POST fields: from the columns stored at submission, the same as the core parser reads from the
// signed XML (the fallback of rows stored before migration 0004).
import { describe, expect, it } from 'vitest';
import { buildComprobanteXml } from '../src/core/xml/build.js';
import { sendRequestOf, submitMeta } from '../src/service/delivery/send.js';
import { feFixture, teExtranjeroFixture, teFixture, type Fixture } from './xml-fixtures.js';

/** The columns submitDocument stores (src/service/documents.ts). */
function columns(f: Fixture) {
  const { doc } = f;
  return {
    fecha_emision: doc.fechaEmision,
    emisor_tipo: doc.emisor.identificacion.tipo,
    emisor_numero: doc.emisor.identificacion.numero,
    receptor_tipo: doc.receptor?.identificacion.tipo ?? null,
    receptor_numero: doc.receptor?.identificacion.numero ?? null,
  };
}

describe('send: fecha, emisor and receptor of POST /recepcion', () => {
  for (const make of [feFixture, teFixture, teExtranjeroFixture]) {
    const f = make();
    it(`${f.name}: the stored columns give what the parser reads from the XML`, () => {
      const xml = buildComprobanteXml(f.doc, f.totals);
      const fromColumns = sendRequestOf({ xml: '<not read/>', ...columns(f) });
      expect(fromColumns).toEqual(submitMeta(xml));
      expect(fromColumns.emisor).toEqual({ tipoIdentificacion: f.doc.emisor.identificacion.tipo, numeroIdentificacion: f.doc.emisor.identificacion.numero });
    });
  }

  it('a row without the columns (stored before migration 0004) is read from its XML', () => {
    const f = feFixture();
    const xml = buildComprobanteXml(f.doc, f.totals);
    const none = { fecha_emision: f.doc.fechaEmision, emisor_tipo: null, emisor_numero: null, receptor_tipo: null, receptor_numero: null };
    expect(sendRequestOf({ xml, ...none })).toEqual({
      fecha: f.doc.fechaEmision,
      emisor: { tipoIdentificacion: '02', numeroIdentificacion: '3101123456' },
      receptor: { tipoIdentificacion: '01', numeroIdentificacion: '112345678' },
    });
    expect(() => sendRequestOf({ xml: '<FacturaElectronica>', ...none })).toThrow();
  });

  it('a receptor Hacienda cannot carry (extranjero, or a number over 12 characters) is left out', () => {
    const f = teExtranjeroFixture();
    const r = sendRequestOf({ xml: '', ...columns(f) });
    expect(r.receptor).toBeUndefined();
    expect(sendRequestOf({ xml: '', ...columns(feFixture()), receptor_numero: '1234567890123' }).receptor).toBeUndefined();
  });
});
