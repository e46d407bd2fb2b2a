// The mail binding failing (src/mail/send.ts): it throws, rejects, or never answers. The mail is an effect, so the page
// that asked answers the same whatever the binding does; the runner (the one retry owner of effects, src/effects/retry.ts)
// runs the mail again with a backoff, MAX_EFFECT_ATTEMPTS runs in all, then keeps it in dead_letters: bounded, and
// nothing lost. Driven through the real consumer (handleJobs) on a simulated queue with a clock (./simulated-queue.ts);
// the binding is the test env's EMAIL (miniflare's), wrapped to fail as a broken service would.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { handleJobs } from "../../src/background/effects-runner";
import { MAX_EFFECT_ATTEMPTS } from "../../src/effects/retry";
import type { Effect, JobMessage } from "../../src/effects/types";
import type { Env } from "../../src/env";
import { padId } from "../../src/lib/text/ids";
import { makeUser } from "./helpers";
import { askReset, failingBinding, linkIn, mailTo } from "./mail-helpers";
import { Jar, web } from "./oauth-helpers";
import { simulatedQueue } from "./simulated-queue";
import { resendPending } from "../../src/effects/pending";
import { installQueueCapture, runQueuedJobs } from "./queues";

const jobsQueue = () => simulatedQueue<JobMessage>({ binding: env.JOBS, name: "tern-jobs", consumer: handleJobs });
const mailRuns = (bodies: JobMessage[]) =>
  bodies.flatMap((m) => (m.type === "effects" ? m.effects : [m])).filter((e) => e.type === "mail" || e.type === "password_reset").length;
const deadMails = async () =>
  (await env.DB.prepare("SELECT body, attempts FROM dead_letters WHERE queue = 'tern-jobs'").all<{ body: string; attempts: number }>()).results
    .map((r) => ({ attempts: r.attempts, effects: (JSON.parse(r.body) as { effects: Effect[] }).effects }))
    .filter((r) => r.effects.some((e) => e.type === "mail" || e.type === "password_reset"));

afterEach(() => vi.restoreAllMocks());

let n = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${++n}`;

describe("a failing mail binding", () => {
  for (const how of ["throw", "reject", "hang"] as const) {
    it(`that ${how === "throw" ? "throws" : how === "reject" ? "rejects" : "never answers"}: the page answers as usual, the mail is tried ${MAX_EFFECT_ATTEMPTS} times, then kept in dead_letters`, async () => {
      const q = jobsQueue();
      const u = await makeUser(unique(`fault${how}`));
      const before = (await deadMails()).length;
      const asked = await askReset(new Jar(), `${u.username}@example.com`, `203.0.113.${60 + n}`);
      expect(asked.status).toBe(200);
      expect(asked.text_).toContain('id="reset-sent"');
      const { binding, calls } = failingBinding(how);
      const sim = await q.drain({ env: { ...(env as Env), EMAIL: binding, MAIL_TIMEOUT_MS: "50" } });
      expect(calls.n).toBe(MAX_EFFECT_ATTEMPTS);
      expect(mailRuns(sim.bodies)).toBe(MAX_EFFECT_ATTEMPTS);
      // The runner retried, never the queue; the retries waited (15 s doubling, the first nine).
      expect(sim.queueRetries).toBe(0);
      expect(sim.deadLetterQueue).toBe(0);
      expect(sim.now).toBeGreaterThanOrEqual(15 + 30 + 60 + 120 + 240 + 480 + 960 + 1920 + 3600);
      // Nothing lost: the request is in dead_letters (its address, to mail again), and one live link exists (each run
      // wrote a newer one in place of the last).
      const dead = await deadMails();
      expect(dead.length).toBe(before + 1);
      expect(dead.at(-1)!.attempts).toBe(MAX_EFFECT_ATTEMPTS);
      expect(await env.DB.prepare("SELECT count(*) AS n FROM email_links WHERE user_id = ?").bind(padId(u.userId)).first("n")).toBe(1);
    });
  }

  it("that fails twice and then works: the third run sends the mail, once, and its link works", async () => {
    const q = jobsQueue();
    const u = await makeUser(unique("flaky"));
    const since = Date.now() - 1;
    expect((await askReset(new Jar(), `${u.username}@example.com`, "203.0.113.90")).status).toBe(200);
    const { binding, calls } = failingBinding("reject", 2);
    await q.drain({ env: { ...(env as Env), EMAIL: binding, MAIL_TIMEOUT_MS: "50" } });
    expect(calls.n).toBe(3);
    const mails = await mailTo(`${u.username}@example.com`, since);
    expect(mails).toHaveLength(1);
    const link = linkIn(mails[0]!.text, "/auth/password/edit?reset_password_token=");
    expect((await web(new URL(link).pathname + new URL(link).search)).status).toBe(200);
  });

  it("a queue that refuses the reset's effect: the page answers as usual, the effect waits in pending_effects, and the cron's resend mails the link", async () => {
    const u = await makeUser(unique("queuedown"));
    const since = Date.now() - 1;
    const fail = async () => {
      throw new Error("Queue send failed: internal error");
    };
    vi.spyOn(env.JOBS, "send").mockImplementation(fail);
    vi.spyOn(env.JOBS, "sendBatch").mockImplementation(fail);
    const asked = await askReset(new Jar(), `${u.username}@example.com`, "203.0.113.95");
    expect(asked.status).toBe(200);
    expect(asked.text_).toContain('id="reset-sent"');
    const kept = await env.DB.prepare("SELECT body FROM pending_effects").all<{ body: string }>();
    expect(kept.results.some((r) => r.body.includes(`${u.username}@example.com`))).toBe(true);
    vi.restoreAllMocks();
    installQueueCapture();
    expect(await resendPending(env)).toBeGreaterThanOrEqual(1);
    await runQueuedJobs();
    const mails = await mailTo(`${u.username}@example.com`, since);
    expect(mails).toHaveLength(1);
  });
});
