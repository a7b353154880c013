/**
 * Public query routes of api.hacienda.go.cr (NOTES §5): /fe/ae, /fe/cabys, /fe/ex, and the exchange-rate indicators
 * /indicadores/tc/dolar (today), /indicadores/tc/dolar/historico?d=&h= (a range of days) and /indicadores/tc/euro
 * (today). No authentication.
 * The emulator's rates are a deterministic table by date (emulatorTipoCambio), the same on every run.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Registry } from './registry.js';

type Q = { Querystring: Record<string, string | undefined> };

function problem(reply: FastifyReply, status: number, detail: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send({ status, title: status === 404 ? 'Not Found' : 'Bad Request', detail });
}

/** Requests the public routes received (`/_emulator/stats` → `public`). */
export interface PublicRouteStats {
  /** GETs of /indicadores/tc/… (today's rate and the historical range). */
  indicadores: number;
}

const DAY_MS = 86_400_000;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The emulator's BCCR reference rates (colones per dollar) of a day `YYYY-MM-DD`: venta between 500.00 and 539.99,
 * compra 6.50 below, from the day number alone (deterministic, different from one day to the next).
 */
export function emulatorTipoCambio(day: string): { venta: string; compra: string } {
  const n = Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
  const cents = 50_000 + ((n * 7919) % 4_000);
  return { venta: (cents / 100).toFixed(2), compra: ((cents - 650) / 100).toFixed(2) };
}

/** The emulator's euro of a day: dollars per euro 1.0500–1.1999 from the day number, colones at that day's dollar. */
export function emulatorTipoCambioEuro(day: string): { dolares: string; colones: string } {
  const n = Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
  const dolares = (10_500 + ((n * 6_151) % 1_500)) / 10_000;
  return { dolares: dolares.toFixed(4), colones: (Math.round(dolares * Number(emulatorTipoCambio(day).venta) * 100) / 100).toFixed(2) };
}

/** Today in Costa Rica (UTC-6, no DST) as YYYY-MM-DD. */
function crToday(now: number): string {
  return new Date(now - 6 * 3_600_000).toISOString().slice(0, 10);
}

export function registerPublicRoutes(app: FastifyInstance, registry: Registry, baseUrl: () => string, now: () => number = Date.now): PublicRouteStats {
  const stats: PublicRouteStats = { indicadores: 0 };

  // Today's rate: `{venta:{fecha,valor}, compra:{fecha,valor}}` (NOTES §5).
  app.get('/indicadores/tc/dolar', async (_req, reply) => {
    stats.indicadores++;
    const day = crToday(now());
    const r = emulatorTipoCambio(day);
    reply.header('access-control-allow-origin', '*');
    return reply.send({ venta: { fecha: `${day} 00:00:00`, valor: Number(r.venta) }, compra: { fecha: `${day} 00:00:00`, valor: Number(r.compra) } });
  });

  // Today's euro: `{fecha, dolares, colones}` (the live route's shape; it has no history).
  app.get('/indicadores/tc/euro', async (_req, reply) => {
    stats.indicadores++;
    const day = crToday(now());
    const r = emulatorTipoCambioEuro(day);
    reply.header('access-control-allow-origin', '*');
    return reply.send({ fecha: day, dolares: Number(r.dolares), colones: Number(r.colones) });
  });

  // A range of days, one entry a day (the live route answered 503 in 2026: its shape is not sourced; this one is
  // what fecr's client reads, see hacienda/client/queries.ts getTipoCambio).
  app.get<Q>('/indicadores/tc/dolar/historico', async (req, reply) => {
    stats.indicadores++;
    const d = (req.query['d'] ?? '').trim();
    const h = (req.query['h'] ?? d).trim();
    if (!ISO_DAY.test(d) || !ISO_DAY.test(h) || Number.isNaN(Date.parse(d)) || Number.isNaN(Date.parse(h)) || h < d) {
      return problem(reply, 400, 'Los parámetros d y h deben ser fechas AAAA-MM-DD, d ≤ h.');
    }
    const out: { fecha: string; venta: number; compra: number }[] = [];
    for (let t = Date.parse(`${d}T00:00:00Z`); t <= Date.parse(`${h}T00:00:00Z`) && out.length < 366; t += DAY_MS) {
      const day = new Date(t).toISOString().slice(0, 10);
      const r = emulatorTipoCambio(day);
      out.push({ fecha: `${day} 00:00:00`, venta: Number(r.venta), compra: Number(r.compra) });
    }
    reply.header('access-control-allow-origin', '*');
    return reply.send(out);
  });

  app.get<Q>('/fe/ae', async (req, reply) => {
    const id = (req.query['identificacion'] ?? '').trim();
    if (!id) return problem(reply, 400, 'El parámetro identificacion es requerido.');
    // Digits only, no dashes; físicas without the leading 0 (a leading 0 is a 400 at Hacienda).
    if (!/^[1-9]\d{8,11}$/.test(id)) return problem(reply, 400, `La identificación ${id} no es válida.`);
    const t = registry.getTaxpayer(id);
    if (!t) return problem(reply, 404, `No se encontró el contribuyente con identificación ${id}.`);
    reply.header('access-control-allow-origin', '*');
    return reply.send(t);
  });

  app.get<Q>('/fe/cabys', async (req, reply) => {
    const codigo = req.query['codigo'];
    const q = req.query['q'];
    reply.header('access-control-allow-origin', '*');
    if (codigo !== undefined) {
      const c = registry.getCabys(codigo.trim());
      return reply.send(c ? [{ codigo: c.codigo, categorias: [], descripcion: c.descripcion, impuesto: c.impuesto }] : []);
    }
    if (q === undefined || q.trim() === '') return problem(reply, 400, 'Indique el parámetro q (texto) o codigo.');
    const topText = req.query['top'];
    let top = 10;
    if (topText !== undefined) {
      top = Number(topText);
      if (!Number.isInteger(top) || top < 1) return problem(reply, 400, 'El parámetro top debe ser un entero positivo.');
      top = Math.min(top, 500);
    }
    const { total, results } = registry.searchCabys(q);
    const page = results.slice(0, top);
    const base = baseUrl();
    return reply.send({
      total,
      cantidad: page.length,
      cabys: page.map((c) => ({
        codigo: c.codigo,
        descripcion: c.descripcion,
        categorias: [],
        impuesto: c.impuesto,
        uri: `${base}/fe/cabys?codigo=${c.codigo}`,
      })),
    });
  });

  app.get<Q>('/fe/ex', async (req, reply) => {
    const a = (req.query['autorizacion'] ?? '').trim();
    if (!a) return problem(reply, 400, 'El parámetro autorizacion es requerido.');
    if (!/^[A-Za-z]{2,5}-\d{8}-\d{2}$/.test(a)) return problem(reply, 400, `El número de autorización ${a} no tiene el formato AL-00000000-00.`);
    const e = registry.getExoneracion(a);
    if (!e) return problem(reply, 404, `No se encontró la autorización ${a}.`);
    reply.header('access-control-allow-origin', '*');
    return reply.send(e);
  });
  return stats;
}
