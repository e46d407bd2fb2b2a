// The STREAMING namespace. One class, two roles told apart by the object's name (the caller picks the name):
// - `router`: who listens to what (router.ts). RPC: routerSetHub, routerListening, routerPublishIfCurrent,
//   routerPublish.
// - `user:<accountId>` / `anon:<n>`: a hub holding connections (hub.ts). fetch (WebSocket or event stream from the
//   Worker), the hibernation handlers, alarm, and RPC: deliver, kill.
// Design, limits and costs: docs/architecture.md, "Streaming".
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { Hub } from "./hub";
import type { HubItem, Listening, Routed } from "./protocol";
import { Router, type HubDeliver, type HubState, type SetHubAnswer } from "./router";

export class Streaming extends DurableObject<Env> {
  private hubImpl: Hub | null = null;
  private routerImpl: Router | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Application-level keepalives some clients send are answered by the runtime without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  private hub(): Hub {
    if (!this.hubImpl) this.hubImpl = new Hub(this.ctx, this.env);
    return this.hubImpl;
  }

  private router(): Router {
    if (!this.routerImpl) this.routerImpl = new Router(this.ctx.storage, (name) => hubStub(this.env, name));
    return this.routerImpl;
  }

  // ---- hub role ----

  async fetch(request: Request): Promise<Response> {
    return this.hub().fetch(request);
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.hub().onMessage(ws, message);
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string, _wasClean: boolean): Promise<void> {
    await this.hub().onClose(ws, code, reason);
  }

  async webSocketError(ws: WebSocket, _error: unknown): Promise<void> {
    await this.hub().onClose(ws, 1011, "");
  }

  async alarm(): Promise<void> {
    await this.hub().alarm();
  }

  deliver(items: HubItem[]): Promise<HubState> {
    return this.hub().deliver(items);
  }

  kill(tokenId: string | null): Promise<void> {
    return this.hub().kill(tokenId);
  }

  // ---- router role ----

  routerSetHub(hub: string, keys: string[] | null, version: number, since?: number): Promise<SetHubAnswer> {
    return this.router().setHub(hub, keys, version, since);
  }

  routerPublish(events: Routed[]): Promise<void> {
    return this.router().publish(events);
  }

  routerListening(): Promise<Listening> {
    return this.router().listening();
  }

  routerPublishIfCurrent(version: string, events: Routed[]): Promise<Listening | null> {
    return this.router().publishIfCurrent(version, events);
  }
}

export function hubStub(env: Env, name: string): HubDeliver & { kill(tokenId: string | null): Promise<void>; fetch(req: Request): Promise<Response> } {
  return env.STREAMING.get(env.STREAMING.idFromName(name)) as unknown as HubDeliver & {
    kill(tokenId: string | null): Promise<void>;
    fetch(req: Request): Promise<Response>;
  };
}
