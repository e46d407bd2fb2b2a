// Instance activity (GET /api/v1/instance/activity; masto's Activity): one entry per week, newest first, each count a
// string as Mastodon renders them, `week` the unix seconds of the week's start.
export interface MastodonInstanceActivity {
  week: string;
  statuses: string;
  logins: string;
  registrations: string;
}

/** One week's counts (src/services/instance/instance.ts weeklyActivity); `week` in ms. */
export interface WeekCounts {
  week: number;
  statuses: number;
  logins: number;
  registrations: number;
}

export function renderInstanceActivity(w: WeekCounts): MastodonInstanceActivity {
  return {
    week: String(Math.floor(w.week / 1000)),
    statuses: String(w.statuses),
    logins: String(w.logins),
    registrations: String(w.registrations),
  };
}
