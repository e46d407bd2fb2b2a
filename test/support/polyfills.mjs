// masto 8 targets Node 22; these fill the gaps on Node 20 (the project's minimum).
import WebSocketImpl from "ws";

if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function withResolvers() {
    let resolve, reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

if (typeof globalThis.WebSocket === "undefined") {
  globalThis.WebSocket = WebSocketImpl;
}

if (typeof globalThis.navigator === "undefined") {
  Object.defineProperty(globalThis, "navigator", {
    value: { userAgent: `Node.js/${process.versions.node}`, language: "en" },
    configurable: true,
  });
}
