// Admin::Cohort entity (docs.joinmastodon.org/entities/Admin_Cohort): the users who signed up in one day or month, and
// for it and each later period the share of them still signing in then (`rate`) and how many (`value`, a string as
// Mastodon renders it). The counts come from src/services/admin/measures.ts adminRetention.

export type CohortFrequency = "day" | "month";

export interface MastodonAdminCohortPeriod {
  /** The period's start, as Mastodon writes it ("2024-01-01T00:00:00+00:00"). */
  date: string;
  rate: number;
  value: string;
}

export interface MastodonAdminCohort {
  period: string;
  frequency: CohortFrequency;
  data: MastodonAdminCohortPeriod[];
}

const isoPeriod = (ms: number) => `${new Date(ms).toISOString().slice(0, 10)}T00:00:00+00:00`;

/** `period` and each `data[].period` are the UTC start (ms) of a day or month. */
export function renderAdminCohort(period: number, frequency: CohortFrequency, data: { period: number; rate: number; value: number }[]): MastodonAdminCohort {
  return { period: isoPeriod(period), frequency, data: data.map((d) => ({ date: isoPeriod(d.period), rate: d.rate, value: String(d.value) })) };
}
