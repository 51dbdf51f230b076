// The course's stand-in for the iframe-worker shim that Material's offline plugin would otherwise load from
// https://unpkg.com/iframe-worker/shim (mkdocs.yml: extra.polyfills; the plugin adds unpkg's only when no polyfill's
// path names "iframe-worker", hence this file's name). A page opened from disk (file://) may not start a Web Worker,
// and Material's search runs in one (assets/javascripts/workers/search.*.js). Here `new Worker(url)` runs that script
// in a hidden same-origin iframe instead: the worker's global postMessage is routed to the page, and the page's
// postMessage becomes a "message" event in the iframe. Served over HTTP, browsers run real workers: nothing changes.
(function () {
  if (location.protocol !== "file:") {
    return;
  }

  class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this._pending = [];
      this._frame = document.createElement("iframe");
      this._frame.hidden = true;
      this._frame.setAttribute("aria-hidden", "true");
      (document.body || document.documentElement).appendChild(this._frame);
      const scope = this._frame.contentWindow;
      // what the worker's code calls: postMessage(data) answers the page
      scope.postMessage = (data) => setTimeout(() => this._emit("message", { data: data }));
      scope.importScripts = () => {
        throw new Error("importScripts is not available to a worker of a page opened from disk");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = () => {
        this._scope = scope;
        this._pending.splice(0).forEach((data) => this.postMessage(data));
      };
      script.onerror = () => this._emit("error", { message: `could not load the worker script ${script.src}` });
      scope.document.head.appendChild(script);
    }

    postMessage(data) {
      if (!this._scope) {
        this._pending.push(data);
        return;
      }
      const scope = this._scope;
      setTimeout(() => scope.dispatchEvent(new scope.MessageEvent("message", { data: data })));
    }

    terminate() {
      this._scope = null;
      this._frame.remove();
    }

    _emit(type, init) {
      const event = type === "message" ? new MessageEvent("message", init) : new ErrorEvent("error", init);
      this.dispatchEvent(event);
      const handler = type === "message" ? this.onmessage : this.onerror;
      if (typeof handler === "function") {
        handler.call(this, event);
      }
    }
  }

  window.Worker = FrameWorker;
})();
