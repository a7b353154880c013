/** Public query routes of api.hacienda.go.cr (NOTES §5): /fe/ae, /fe/cabys, /fe/ex. No authentication. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Registry } from './registry.js';

type Q = { Querystring: Record<string, string | undefined> };

function problem(reply: FastifyReply, status: number, detail: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send({ status, title: status === 404 ? 'Not Found' : 'Bad Request', detail });
}

export function registerPublicRoutes(app: FastifyInstance, registry: Registry, baseUrl: () => string): void {
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
}
