/**
 * What the emulator knows about taxpayers, exoneration documents and CABYS codes: seeded from the
 * registry JSON (shapes of /fe/ae and /fe/ex) and the CABYS catalogue (`{id, description, tax_percent}`,
 * tax_percent a fraction), either plain JSON or gzip (detected by magic bytes).
 */
import { statSync } from 'node:fs';
import { DEFAULT_CABYS_CODES_FILE, DEFAULT_CABYS_FILE, readCabysCodes, readCabysRows, readMaybeGzip, type CabysCodes } from '../adapters/cabys-file.js';
import { codigosAntiguosDe, sucesorAntigua } from '../core/catalog/actividades.js';
import { ciiu4Descripcion, nombreAntigua } from '../core/catalog/actividades-nombres.js';

export interface TaxpayerRecord {
  nombre: string;
  tipoIdentificacion: string;
  regimen: { codigo: number; descripcion: string };
  situacion: { moroso: string; omiso: string; estado: string; administracionTributaria: string; mensaje?: string };
  /** As /fe/ae lists them since TRIBU-CR: `codigo` the CIIU-4 code (`6201.0`), `ciiu3` the old code(s). */
  actividades: { estado: string; tipo: string; codigo: string; descripcion: string; ciiu3?: { codigo: string; descripcion: string }[] }[];
  /** Where the taxpayer is registered (learnt from its first accepted document; the seed has none). */
  ubicacion?: { provincia: string; canton: string; distrito: string };
}

export interface ExoneracionRecord {
  numeroDocumento: string;
  identificacion: string;
  porcentajeExoneracion: number;
  [k: string]: unknown;
}

export interface CabysEntry {
  codigo: string;
  descripcion: string;
  /** Integer percent (13, 4, 2, 1, 0). */
  impuesto: number;
}

interface IndexedCabys extends CabysEntry {
  tokens: string[];
  norm: string;
}

export interface RegistryFile {
  contribuyentes?: (TaxpayerRecord & { identificacion: string })[];
  exoneraciones?: ExoneracionRecord[];
}

/** Lowercase, accents removed, punctuation → spaces. */
export function normalizeText(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9ñ]+/g, ' ')
    .trim();
}

const STOPWORDS = new Set(['de', 'del', 'la', 'las', 'el', 'los', 'y', 'o', 'para', 'con', 'en', 'a', 'por', 'sin', 'al', 'un', 'una']);

function singular(w: string): string {
  if (w.length > 4 && w.endsWith('es')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s')) return w.slice(0, -1);
  return w;
}

export class Registry {
  private readonly taxpayers = new Map<string, TaxpayerRecord>();
  private readonly exoneraciones = new Map<string, ExoneracionRecord>();
  private cabysIndex: { list: IndexedCabys[] } | undefined;
  /** Where the CABYS catalogue is read from, on first use (it is ≈ 20 000 entries: most commands never need it). */
  private cabysFile: string | undefined;
  /** The catalogue by code: what the reception's -400 check needs, without the search index. */
  private cabysByCode: Map<string, CabysEntry> | undefined;

  private get cabysCodes(): Map<string, CabysEntry> {
    if (!this.cabysByCode) {
      const byCode = new Map<string, CabysEntry>();
      if (this.cabysFile) {
        for (const row of readCabysRows(this.cabysFile)) byCode.set(row.id, { codigo: row.id, descripcion: row.description.trim(), impuesto: Math.round(row.tax_percent * 100) });
      }
      this.cabysByCode = byCode;
    }
    return this.cabysByCode;
  }

  /** The search index (normalised text and words of every description), built on the first search. */
  private get cabysData(): { list: IndexedCabys[] } {
    if (!this.cabysIndex) this.cabysIndex = { list: [...this.cabysCodes.values()].map(indexCabys) };
    return this.cabysIndex;
  }

  static load(registryFile: string, cabysFile: string): Registry {
    const r = new Registry();
    const reg = JSON.parse(readMaybeGzip(registryFile)) as RegistryFile;
    for (const c of reg.contribuyentes ?? []) {
      const { identificacion, ...rest } = c;
      r.taxpayers.set(identificacion, normalizeTaxpayer(rest));
    }
    for (const e of reg.exoneraciones ?? []) r.exoneraciones.set(e.numeroDocumento.toUpperCase(), e);
    // Fail early on a missing catalogue file; read and index it on first use.
    statSync(cabysFile);
    r.cabysFile = cabysFile;
    return r;
  }

  getTaxpayer(id: string): TaxpayerRecord | undefined {
    return this.taxpayers.get(id);
  }

  hasTaxpayer(id: string): boolean {
    return this.taxpayers.has(id);
  }

  putTaxpayer(id: string, t: TaxpayerRecord): void {
    this.taxpayers.set(id, normalizeTaxpayer(t));
  }

  taxpayerIds(): string[] {
    return [...this.taxpayers.keys()];
  }

  getExoneracion(numero: string): ExoneracionRecord | undefined {
    return this.exoneraciones.get(numero.toUpperCase());
  }

  /** Whether a CABYS catalogue is known (a registry built without one checks no CABYS code). */
  get hasCabysCatalogue(): boolean {
    return this.cabysFile !== undefined;
  }

  private codesIndex: CabysCodes | undefined;

  /** Whether a code is in the CABYS catalogue (the -400 check): the shipped catalogue's code index, not its JSON. */
  hasCabys(codigo: string): boolean {
    if (!this.cabysFile) return false;
    this.codesIndex ??= readCabysCodes(this.cabysFile === DEFAULT_CABYS_FILE ? DEFAULT_CABYS_CODES_FILE : this.cabysFile);
    return this.codesIndex.has(codigo);
  }

  getCabys(codigo: string): CabysEntry | undefined {
    const c = this.cabysCodes.get(codigo);
    return c ? { codigo: c.codigo, descripcion: c.descripcion, impuesto: c.impuesto } : undefined;
  }

  get cabysCount(): number {
    return this.cabysCodes.size;
  }

  /**
   * Word search: accents and case ignored. Ranking: more query words matched; then exact word matches over
   * word-prefix and substring matches; then the earliest position of a match (descriptions that start with the
   * word first); then shorter descriptions; then code.
   */
  searchCabys(q: string): { total: number; results: CabysEntry[] } {
    const words = normalizeText(q).split(' ').filter(Boolean);
    const significant = words.filter((w) => !STOPWORDS.has(w));
    const query = significant.length ? significant : words;
    if (query.length === 0) return { total: 0, results: [] };
    const scored: { item: IndexedCabys; matched: number; score: number; pos: number }[] = [];
    for (const item of this.cabysData.list) {
      let matched = 0;
      let score = 0;
      let pos = Number.MAX_SAFE_INTEGER;
      for (const w of query) {
        let best = 0;
        let bestPos = Number.MAX_SAFE_INTEGER;
        const ws = singular(w);
        // Every kind of match implies the normalized text contains the singular form: cheap prefilter.
        if (!item.norm.includes(ws)) continue;
        for (let i = 0; i < item.tokens.length; i++) {
          const t = item.tokens[i]!;
          let s = 0;
          if (t === w || singular(t) === ws) s = 3;
          else if (t.startsWith(w)) s = 2;
          else if (w.length >= 4 && t.includes(w)) s = 1;
          if (s > best || (s === best && s > 0 && i < bestPos)) {
            best = s;
            bestPos = i;
          }
        }
        if (best > 0) {
          matched++;
          score += best;
          pos = Math.min(pos, bestPos);
        }
      }
      if (matched > 0) scored.push({ item, matched, score, pos });
    }
    // When some entries match every word, only those count (the real API is an AND search).
    const full = scored.filter((s) => s.matched === query.length);
    const pool = full.length > 0 ? full : scored;
    pool.sort(
      (a, b) =>
        b.matched - a.matched ||
        b.score - a.score ||
        a.pos - b.pos ||
        a.item.descripcion.length - b.item.descripcion.length ||
        (a.item.codigo < b.item.codigo ? -1 : a.item.codigo > b.item.codigo ? 1 : 0),
    );
    return {
      total: pool.length,
      results: pool.map((s) => ({ codigo: s.item.codigo, descripcion: s.item.descripcion, impuesto: s.item.impuesto })),
    };
  }
}

function indexCabys(e: CabysEntry): IndexedCabys {
  const norm = normalizeText(e.descripcion);
  return { ...e, norm, tokens: norm.split(' ').filter(Boolean) };
}

/**
 * A taxpayer as /fe/ae answers since TRIBU-CR (actividades/SOURCES.md §5): each activity's `codigo` a CIIU-4 string
 * (`6201.0`) and `ciiu3` the list of its old code(s). An activity given (or learnt from a document) with an old code
 * of the former catalogue is listed under its CIIU-4 successor, the old code under `ciiu3`; a CIIU-4 activity without
 * `ciiu3` gets the old codes the mapping gives for it.
 */
function normalizeTaxpayer(t: TaxpayerRecord): TaxpayerRecord {
  return { ...t, actividades: (t.actividades ?? []).map(normalizeActividad) };
}

function normalizeActividad(a: TaxpayerRecord['actividades'][number]): TaxpayerRecord['actividades'][number] {
  const codigo = String(a.codigo);
  const sucesor = sucesorAntigua(codigo);
  if (sucesor) {
    const nombre = nombreAntigua(codigo) ?? '';
    return { ...a, codigo: sucesor, descripcion: a.descripcion || (ciiu4Descripcion(sucesor) ?? nombre), ciiu3: [{ codigo, descripcion: nombre }] };
  }
  const ciiu3 = a.ciiu3 ?? codigosAntiguosDe(codigo).map((c) => ({ codigo: c, descripcion: nombreAntigua(c) ?? '' }));
  return { ...a, codigo, descripcion: a.descripcion || (ciiu4Descripcion(codigo) ?? ''), ciiu3 };
}
