// Admin::Measure entity (docs.joinmastodon.org/entities/Admin_Measure): one dashboard figure, its total over the
// period (and the period before, when it has one) and one value a day, every number a string as Mastodon renders it.
// The counts come from src/services/admin/measures.ts.

export interface MastodonAdminMeasureDay {
  /** The day's UTC midnight, as Mastodon writes it ("2024-01-02T00:00:00Z"). */
  date: string;
  value: string;
}

export interface MastodonAdminMeasure {
  key: string;
  unit: string | null;
  total: string;
  /** The total for people ("1.5 MB"), for a measure of bytes. */
  human_value?: string;
  /** The total over as many days before the period; absent for a measure of all time. */
  previous_total?: string;
  data: MastodonAdminMeasureDay[];
}

/** One measure's counts: `days` the period's days (UTC midnight, ms), `previousTotal` null for a measure of all time. */
export interface MeasureCounts {
  key: string;
  unit: string | null;
  total: number;
  previousTotal: number | null;
  days: { day: number; value: number }[];
}

/** Bytes for people, as Rails' number_to_human_size: "1 Byte", "512 Bytes", "1.5 KB", three significant digits. */
export function humanSize(bytes: number): string {
  const units = ["Bytes", "KB", "MB", "GB", "TB"];
  let n = bytes;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} ${n === 1 ? "Byte" : "Bytes"}` : `${Number(n.toPrecision(3))} ${units[i]}`;
}

const isoDay = (ms: number) => `${new Date(ms).toISOString().slice(0, 10)}T00:00:00Z`;

export function renderAdminMeasure(m: MeasureCounts): MastodonAdminMeasure {
  // Built field by field so the keys keep Mastodon's order (human_value and previous_total before data).
  const out = { key: m.key, unit: m.unit, total: String(m.total) } as MastodonAdminMeasure;
  if (m.unit === "bytes") out.human_value = humanSize(m.total);
  if (m.previousTotal !== null) out.previous_total = String(m.previousTotal);
  out.data = m.days.map((d) => ({ date: isoDay(d.day), value: String(d.value) }));
  return out;
}
