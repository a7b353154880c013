/**
 * Money and numbers as a Costa Rican reader sees them on the printed document and in the mail (one formatter for
 * both): the Costa Rican locale's convention (CLDR `es-CR`, what `Intl.NumberFormat('es-CR')` prints), thousands
 * grouped by a no-break space, a decimal comma, the symbol against the figure: `₡1 234 567,89`, `US$2 245,86`,
 * `EUR 10,00`. Money always with exactly 2 decimals, rounded half-up from the XML's 5. The XML itself keeps
 * Hacienda's format (decimal point, no grouping): this is only for people.
 */
import { Decimal, dec } from './money.js';

/** The group separator: U+00A0, a space a line never breaks at (a figure stays in one piece in a narrow column). */
export const GROUP = '\u00a0';

/** `1234567` → `1 234 567` (digits only, optionally signed; the space is GROUP). */
export function groupThousands(int: string): string {
  const sign = int.startsWith('-') ? '-' : '';
  return `${sign}${int.replace('-', '').replace(/\B(?=(\d{3})+(?!\d))/g, GROUP)}`;
}

/** An amount without its currency: exactly 2 decimals, half-up, grouped (`1234567.505` → `1 234 567,51`); blank → `0,00`. */
export function formatAmount(value: string | undefined): string {
  if (value === undefined || value.trim() === '') return '0,00';
  let fixed: string;
  try {
    fixed = dec(value).toFixed(2, Decimal.ROUND_HALF_UP);
  } catch {
    return value;
  }
  const [int, frac] = fixed.split('.');
  return `${groupThousands(int!)},${frac}`;
}

/** How an amount of the currency is marked: `₡`, `US$`, else the ISO code and a space. */
export function currencySymbol(code: string): string {
  if (code === 'CRC') return '₡';
  if (code === 'USD') return 'US$';
  return `${code} `;
}

/** An amount with its currency (`₡1 234 567,89`, `US$2 245,86`, `EUR 10,00`); a negative one `-₡5,00`. */
export function formatMoney(value: string | undefined, moneda: string): string {
  const amount = formatAmount(value);
  return amount.startsWith('-') ? `-${currencySymbol(moneda)}${amount.slice(1)}` : `${currencySymbol(moneda)}${amount}`;
}

/** A quantity or a percentage with its own precision, no trailing zeros, decimal comma (`7.500` → `7,5`, `13.00` → `13`). */
export function formatNumber(value: string): string {
  try {
    const [int, frac] = dec(value).toFixed().split('.');
    return frac === undefined ? groupThousands(int!) : `${groupThousands(int!)},${frac}`;
  } catch {
    return value;
  }
}

/** An exchange rate (₡ per unit): at least 2 decimals, more only when the XML has significant ones (`507.85000` → `507,85`). */
export function formatRate(value: string): string {
  try {
    const d = dec(value);
    const [int, frac] = (d.decimalPlaces() <= 2 ? d.toFixed(2) : d.toFixed()).split('.');
    return `${groupThousands(int!)},${frac}`;
  } catch {
    return value;
  }
}

/**
 * A foreign-currency amount in colones: the amount as printed (2 decimals, half-up) × the tipo de cambio, so the
 * printed `US$2 245,86 × ₡507,85 = ₡1 140 560,00` checks out by hand (the XML's 5 decimals would differ by up to
 * half a cent × the rate). Undefined when either is not a number.
 */
export function inColones(amount: string, tipoCambio: string): string | undefined {
  try {
    return dec(amount).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).times(dec(tipoCambio)).toString();
  } catch {
    return undefined;
  }
}
