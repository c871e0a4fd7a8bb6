// The session menu's Publish panel: publish the report at /r/<token> (each run of the analysis
// updates it), show the link with a Copy button, unpublish it. Drawn from the publication's API.
import { Api } from "./api.js";
import { copyButton } from "./copy.js";
import { el } from "./dom.js";

class PublishPanel {
  constructor(element, api, url) {
    this.body = el("div", { class: "stack" });
    element.append(this.body);
    this.api = api;
    this.url = url;
  }

  async load() {
    try {
      this.show(await this.api.get(this.url));
    } catch (error) {
      if (error.status === 404) this.show(null);
      else this.failed(error);
    }
  }

  /** The link and Unpublish when ``publication`` is one, else the Publish form. */
  show(publication) {
    if (publication === null) {
      const signIn = el("input", { testid: "publish-sign-in", attrs: { type: "checkbox" } });
      const publish = el("button", { testid: "publish", text: "Publish", attrs: { type: "button" } });
      publish.addEventListener("click", () =>
        this.act(() => this.api.post(this.url, { sign_in_required: signIn.checked })),
      );
      this.body.replaceChildren(el("label", {}, signIn, " Only for people who sign in"), publish);
      return;
    }
    const url = new URL(publication.url, window.location.origin).href;
    const count = publication.versions;
    const versions =
      count === 0 ? "No run yet: it shows this session" : `${count} version${count === 1 ? "" : "s"}`;
    const unpublish = el("button", {
      class: "link danger",
      testid: "unpublish",
      text: "Unpublish",
      attrs: { type: "button" },
    });
    unpublish.addEventListener("click", () =>
      this.act(async () => {
        await this.api.delete(this.url);
        return null;
      }),
    );
    const link = el("a", {
      testid: "published-link",
      text: "Open",
      attrs: { href: url, target: "_blank", rel: "noopener" },
    });
    this.body.replaceChildren(
      el("input", { testid: "published-url", attrs: { readonly: "", value: url } }),
      el("div", {}, copyButton(() => url, "Copy link", "copy-published-url"), " ", link),
      el("small", {
        text: `${versions}${publication.sign_in_required ? "; readers must sign in" : ""}`,
      }),
      unpublish,
    );
  }

  async act(request) {
    try {
      this.show(await request());
    } catch (error) {
      this.failed(error);
    }
  }

  failed(error) {
    this.body.append(el("p", { class: "error", testid: "publish-error", text: error.message }));
  }
}

const panel = document.querySelector("[data-publish-url]");
if (panel) {
  const csrf = document.getElementById("app")?.dataset.csrfToken ?? "";
  new PublishPanel(panel, new Api(csrf), panel.dataset.publishUrl).load();
}
