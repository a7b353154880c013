/**
 * Dates in Costa Rica time. Costa Rica keeps UTC-06:00 all year (no daylight saving), so conversion is
 * fixed arithmetic and never depends on the host's time zone.
 */

export const CR_OFFSET = '-06:00';
const CR_OFFSET_MS = -6 * 60 * 60 * 1000;

/** Calendar parts of an instant as seen in Costa Rica. */
export interface CrDateParts {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses an ISO 8601 date-time. Without an offset it is Costa Rica time. Returns the instant,
 * or null when the text is not a valid date-time (e.g. month 13, 31 February, hour 25).
 */
export function parseIsoDateTime(text: string): Date | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, ys, mos, ds, hs = '0', mis = '0', ss = '0', frac = '', off] = m;
  const y = Number(ys), mo = Number(mos), d = Number(ds), h = Number(hs), mi = Number(mis), s = Number(ss);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const localMs = Date.UTC(y, mo - 1, d, h, mi, s, Number((frac + '000').slice(0, 3)));
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  let offsetMs: number;
  if (off === undefined) offsetMs = CR_OFFSET_MS;
  else if (off.toUpperCase() === 'Z') offsetMs = 0;
  else {
    const sign = off.startsWith('-') ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 14 || om > 59) return null;
    offsetMs = sign * (oh * 60 + om) * 60_000;
  }
  return new Date(localMs - offsetMs);
}

/** The Costa Rica calendar parts of an instant. */
export function crParts(instant: Date): CrDateParts {
  const t = new Date(instant.getTime() + CR_OFFSET_MS);
  return {
    year: t.getUTCFullYear(),
    month: t.getUTCMonth() + 1,
    day: t.getUTCDate(),
    hour: t.getUTCHours(),
    minute: t.getUTCMinutes(),
    second: t.getUTCSeconds(),
  };
}

const p2 = (n: number) => String(n).padStart(2, '0');

/** xs:dateTime in Costa Rica time, whole seconds: `2026-03-15T10:30:00-06:00`. */
export function formatCr(instant: Date): string {
  const p = crParts(instant);
  return `${String(p.year).padStart(4, '0')}-${p2(p.month)}-${p2(p.day)}T${p2(p.hour)}:${p2(p.minute)}:${p2(p.second)}${CR_OFFSET}`;
}

/** Normalizes any accepted ISO 8601 text to Costa Rica xs:dateTime, or null if invalid. */
export function toCrDateTime(text: string): string | null {
  const d = parseIsoDateTime(text);
  return d ? formatCr(d) : null;
}

/**
 * A `since` of a listing: an ISO 8601 date (midnight in Costa Rica) or date-time (without an offset: Costa Rica
 * time) → epoch ms; null when it is neither.
 */
export function parseSince(text: string): number | null {
  const t = text.trim();
  let s = t;
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) s = `${t}T00:00:00-06:00`;
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(t)) s = `${t}-06:00`;
  else if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(t)) return null;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : ms;
}

/** Whether `text` is a calendar day written YYYY-MM-DD (2026-02-30 is not). */
export function isCalendarDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const t = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === text;
}
