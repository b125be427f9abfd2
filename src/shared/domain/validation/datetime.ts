/**
 * The spec's datetime: `YYYY-MM-DDTHH:MM:SS`, optionally with fractional seconds and a trailing `Z`.
 * Without a zone it is UTC. Anything else (other offsets, impossible dates, surrounding whitespace
 * or a BOM: not trimmed, as no text field is, src/shared/domain/validation/text.ts) is refused.
 */
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?Z?$/;

export function parseDateTime(value: string): Date | null {
  const m = DATETIME.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = frac ? Number(frac.slice(1).padEnd(3, '0')) : 0;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms));
  // Date.UTC rolls over (Feb 30 -> Mar 2); a round trip catches impossible dates.
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  return date;
}
