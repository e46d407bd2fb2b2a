// Landing, public profile, status and collection pages. Status and bio HTML comes from renderStatuses/renderAccount, which hold
// sanitised HTML (local text is escaped and linkified on write; remote HTML is sanitised on ingest).
import { raw } from "hono/html";
import type { MastodonAccount } from "../entities/accounts/account";
import type { MastodonCollection } from "../entities/accounts/collection";
import type { MastodonStatus } from "../entities/statuses/status";
import { Layout } from "./layout";

interface Site {
  siteTitle: string;
}

/** Plain text of sanitised HTML, for meta descriptions (the JSX escapes it again on output). */
export function htmlToText(html: string, max = 300): string {
  const text = html
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>\s*<p[^>]*>/gi, "\n\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;|&apos;/g, "'")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function Og(p: { title: string; description: string; url: string; image?: string; type: "profile" | "article" | "website"; siteName: string }) {
  return (
    <>
      <meta name="description" content={p.description} />
      <meta property="og:site_name" content={p.siteName} />
      <meta property="og:type" content={p.type} />
      <meta property="og:title" content={p.title} />
      <meta property="og:description" content={p.description} />
      <meta property="og:url" content={p.url} />
      {p.image ? <meta property="og:image" content={p.image} /> : null}
      <meta name="twitter:card" content="summary" />
      <link rel="canonical" href={p.url} />
    </>
  );
}

export function LandingPage(
  p: Site & {
    description: string;
    domain: string;
    origin: string;
    signedInAs: string | null;
    csrf: string | null;
    registrations: string;
    /** Signed in with a staff role: the page links to /admin. */
    staff?: boolean;
  },
) {
  return (
    <Layout
      title={p.siteTitle}
      siteTitle={p.siteTitle}
      head={<Og title={p.siteTitle} description={p.description} url={`${p.origin}/`} type="website" siteName={p.siteTitle} />}
    >
      <div class="card">
        <h1>{p.siteTitle}</h1>
        <p>{p.description}</p>
        <p class="muted">
          {p.domain} is part of the fediverse. Use any Mastodon app to sign in
          {p.registrations === "closed" ? "." : p.registrations === "approval" ? " or to request an account." : " or to sign up."}
        </p>
        {p.signedInAs ? (
          <form method="post" action="/auth/sign_out">
            <p>
              Signed in as <a href={`/@${p.signedInAs}`}>@{p.signedInAs}</a>.
            </p>
            <p>
              <a href="/settings/profile">Settings</a>
            </p>
            {p.staff ? (
              <p>
                <a href="/admin">Administration</a>
              </p>
            ) : null}
            <input type="hidden" name="csrf" value={p.csrf ?? ""} />
            <button type="submit" class="secondary">
              Sign out
            </button>
          </form>
        ) : (
          <p>
            <a href="/auth/sign_in">Sign in</a>
          </p>
        )}
      </div>
    </Layout>
  );
}

function StatusBody(p: { s: MastodonStatus }) {
  const s = p.s;
  const media = s.media_attachments;
  const body = (
    <>
      <div class="content">{raw(s.content)}</div>
      {/* A file still processed has no url yet: its attribute is left out (hono/jsx omits undefined). */}
      {media.map((m) =>
        m.type === "image" || m.type === "gifv" ? (
          <a href={m.url ?? undefined}>
            <img src={m.preview_url ?? m.url ?? undefined} alt={m.description ?? ""} loading="lazy" />
          </a>
        ) : (
          <p>
            <a href={m.url ?? undefined}>{m.description || `Attached ${m.type}`}</a>
          </p>
        ),
      )}
    </>
  );
  return (
    <article class="status">
      {s.spoiler_text ? (
        <details>
          <summary>{s.spoiler_text}</summary>
          {body}
        </details>
      ) : (
        body
      )}
      <p class="muted">
        <a href={s.url ?? "#"}>
          <time datetime={s.created_at}>{String(s.created_at).slice(0, 16).replace("T", " ")} UTC</time>
        </a>
        {" · "}
        {s.replies_count} replies · {s.reblogs_count} boosts · {s.favourites_count} favourites
      </p>
    </article>
  );
}

function AccountHeader(p: { a: MastodonAccount; domain: string }) {
  return (
    <div class="card">
      <img class="avatar" src={p.a.avatar} alt="" />
      <h1>{p.a.display_name || p.a.username}</h1>
      <p class="muted">
        @{p.a.username}@{p.domain}
      </p>
      <div style="clear:both">{raw(p.a.note)}</div>
      <p class="muted">
        {p.a.statuses_count} posts · {p.a.following_count} following · {p.a.followers_count} followers
      </p>
    </div>
  );
}

export function ProfilePage(p: Site & { account: MastodonAccount; domain: string; statuses: MastodonStatus[] }) {
  const a = p.account;
  const name = a.display_name || a.username;
  return (
    <Layout
      title={`${name} (@${a.username}@${p.domain})`}
      siteTitle={p.siteTitle}
      head={
        <>
          <Og
            title={`${name} (@${a.username}@${p.domain})`}
            description={htmlToText(a.note) || `Posts by ${name}`}
            url={a.url}
            image={a.avatar}
            type="profile"
            siteName={p.siteTitle}
          />
          <meta property="profile:username" content={`${a.username}@${p.domain}`} />
          <link rel="alternate" type="application/activity+json" href={a.uri} />
          {a.noindex ? <meta name="robots" content="noindex, noarchive" /> : null}
        </>
      }
    >
      <AccountHeader a={a} domain={p.domain} />
      <div class="card">{p.statuses.length ? p.statuses.map((s) => <StatusBody s={s} />) : <p class="muted">No public posts yet.</p>}</div>
    </Layout>
  );
}

export function StatusPage(p: Site & { status: MastodonStatus; domain: string }) {
  const s = p.status;
  const a = s.account;
  const name = a.display_name || a.username;
  const description = s.spoiler_text ? `Content warning: ${s.spoiler_text}` : htmlToText(s.content);
  const image = s.media_attachments.find((m) => m.type === "image")?.preview_url;
  return (
    <Layout
      title={`${name}: "${htmlToText(s.content, 60)}"`}
      siteTitle={p.siteTitle}
      head={
        <>
          <Og
            title={`${name} (@${a.username}@${p.domain})`}
            description={description}
            url={s.url ?? s.uri}
            image={image ?? a.avatar}
            type="article"
            siteName={p.siteTitle}
          />
          <meta property="article:published_time" content={s.created_at} />
          <link rel="alternate" type="application/activity+json" href={s.uri} />
          {s.url ? <link rel="alternate" type="application/json+oembed" href={oembedUrl(s.url)} /> : null}
          {a.noindex ? <meta name="robots" content="noindex, noarchive" /> : null}
        </>
      }
    >
      <div class="card">
        <AuthorLine a={a} domain={p.domain} />
        <StatusBody s={s} />
      </div>
    </Layout>
  );
}

/** A post's author above it: avatar, name (linking the profile) and handle. */
function AuthorLine(p: { a: MastodonAccount; domain: string }) {
  return (
    <p>
      <img src={p.a.avatar} alt="" width={48} height={48} style="border-radius:6px;vertical-align:middle" />{" "}
      <a href={p.a.url}>
        <strong>{p.a.display_name || p.a.username}</strong>
      </a>{" "}
      <span class="muted">
        @{p.a.username}@{p.domain}
      </span>
    </p>
  );
}

/** Where the oEmbed answer for a status page is (the page's own origin: GET /api/oembed, src/web/embed.tsx). */
const oembedUrl = (statusUrl: string) => `${new URL(statusUrl).origin}/api/oembed?url=${encodeURIComponent(statusUrl)}`;

/**
 * A status inside another site's iframe (`/@user/:id/embed`, the `html` of its oEmbed): the author and the post without
 * the site's header; every link opens outside the frame.
 */
export function EmbedPage(p: Site & { status: MastodonStatus; domain: string }) {
  const s = p.status;
  const a = s.account;
  const name = a.display_name || a.username;
  return (
    <Layout title={`${name}: "${htmlToText(s.content, 60)}"`} siteTitle={p.siteTitle} head={<base target="_blank" />} bare>
      <div class="card" style="margin:0">
        <AuthorLine a={a} domain={p.domain} />
        <StatusBody s={s} />
        <p class="muted">
          <a href={s.url ?? s.uri}>Post on {p.domain}</a>
        </p>
      </div>
    </Layout>
  );
}

/** A collection's page (its `url`): the curator, the description, the hashtag and the accounts it recommends. */
export function CollectionPage(p: Site & { collection: MastodonCollection; accounts: MastodonAccount[]; domain: string }) {
  const c = p.collection;
  const byId = new Map(p.accounts.map((a) => [a.id, a]));
  const owner = byId.get(c.account_id);
  const featured = c.items.flatMap((i) => {
    const a = byId.get(i.account_id);
    return a ? [a] : [];
  });
  const acct = (a: MastodonAccount) => (a.acct.includes("@") ? a.acct : `${a.acct}@${p.domain}`);
  return (
    <Layout
      title={`${c.name}${owner ? ` · ${owner.display_name || owner.username}` : ""}`}
      siteTitle={p.siteTitle}
      head={
        <>
          <Og
            title={c.name}
            description={htmlToText(c.description) || `${featured.length} accounts`}
            url={c.url ?? c.uri}
            image={owner?.avatar}
            type="website"
            siteName={p.siteTitle}
          />
          <link rel="alternate" type="application/activity+json" href={c.uri} />
          {!c.discoverable || owner?.noindex ? <meta name="robots" content="noindex, noarchive" /> : null}
        </>
      }
    >
      <div class="card">
        <h1>{c.name}</h1>
        {owner ? (
          <p class="muted">
            A collection by <a href={owner.url}>{owner.display_name || owner.username}</a> (@{acct(owner)})
            {c.tag ? (
              <>
                {" · "}
                <a href={c.tag.url}>#{c.tag.name}</a>
              </>
            ) : null}
          </p>
        ) : null}
        {/* A local description is the curator's plain text (escaped here); a remote one was sanitised on ingest. */}
        {c.description ? <p>{c.local ? c.description : raw(c.description)}</p> : null}
      </div>
      <div class="card">
        {featured.length ? (
          featured.map((a) => (
            <p>
              <img src={a.avatar} alt="" width={48} height={48} style="border-radius:6px;vertical-align:middle" />{" "}
              <a href={a.url}>
                <strong>{a.display_name || a.username}</strong>
              </a>{" "}
              <span class="muted">@{acct(a)}</span>
            </p>
          ))
        ) : (
          <p class="muted">No accounts in this collection yet.</p>
        )}
      </div>
    </Layout>
  );
}

export function NotFoundPage(p: Site) {
  return (
    <Layout title="Not found" siteTitle={p.siteTitle}>
      <div class="card">
        <h1>Not found</h1>
        <p>The page you are looking for isn't here.</p>
      </div>
    </Layout>
  );
}
