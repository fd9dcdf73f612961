// ISO-8601 date-time with an optional zone. Fractions beyond milliseconds (nanosecond producers) are cut.
const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2})?)?$/;

/**
 * Parses an OpenLineage eventTime to ms since the epoch, or returns undefined when it is not a date-time.
 * A value without a zone is taken as UTC (Marquez assumes its own zone; UTC makes the result independent of
 * where the server runs).
 */
export function parseEventTime(value: string): number | undefined {
  const match = DATE_TIME_RE.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = match;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 60)
    return undefined;
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(Number(y), month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  let time = date.getTime();
  if (z === undefined && sign !== undefined) {
    const offsetMinutes = Number(oh) * 60 + Number(om ?? 0);
    time -= (sign === '+' ? 1 : -1) * offsetMinutes * 60_000;
  }
  return Number.isFinite(time) ? time : undefined;
}
