// The session's privacy settings, in the session's sidebar (its tools): what of the data the model may see (PATCH
// /api/sessions/<id> {"privacy": "full" | "schema", "send_chart_images": ...}). The user always
// sees every output; this is only what reaches the model (analyst/trust/privacy.py). A workspace
// in schema mode sets it for every session in it: the choice is then shown, not offered.
import { el } from "./dom.js";

const MODES = [
  ["full", "Full outputs"],
  ["schema", "Schema and aggregates"],
];

export class PrivacySetting {
  /** ``privacy``, ``sendChartImages``: the session's settings now; ``privacySetBy``: the name of
   *  the workspace that sets its mode ("" when the session chooses); ``onError(message)`` when a
   *  change is refused. */
  constructor({ api, apiBase, privacy, privacySetBy, sendChartImages, onError }) {
    this.select = el("select", {
      class: "privacy-setting",
      testid: "privacy-mode",
      attrs: { "aria-label": "What of your data the model may see" },
    });
    for (const [mode, text] of MODES) this.select.append(el("option", { text, attrs: { value: mode } }));
    this.images = el("input", { testid: "send-chart-images", attrs: { type: "checkbox" } });
    this.setBy = el("small", { class: "privacy-set-by", testid: "privacy-set-by" });
    let saved = {
      privacy: MODES.some(([mode]) => mode === privacy) ? privacy : "full",
      privacy_set_by: privacySetBy || null,
      send_chart_images: sendChartImages,
    };
    const show = () => {
      this.select.value = saved.privacy;
      this.select.disabled = Boolean(saved.privacy_set_by);
      // textContent: the workspace's name is its admins' text, never markup.
      this.setBy.textContent = saved.privacy_set_by
        ? `Set by the workspace ${saved.privacy_set_by}: every session in it is in schema mode.`
        : "";
      this.setBy.hidden = !saved.privacy_set_by;
      this.images.checked = saved.send_chart_images;
    };
    const change = async (body) => {
      try {
        const session = await api.patch(apiBase, body);
        saved = {
          privacy: session.privacy,
          privacy_set_by: session.privacy_set_by,
          send_chart_images: session.send_chart_images,
        };
      } catch (error) {
        onError(error.message);
      }
      show();
    };
    show();
    this.select.addEventListener("change", () => change({ privacy: this.select.value }));
    this.images.addEventListener("change", () => change({ send_chart_images: this.images.checked }));
    this.element = el(
      "section",
      { class: "privacy stack", testid: "privacy-panel" },
      el("h2", { text: "Privacy" }),
      el("label", {}, "What the model sees", this.select),
      this.setBy,
      el("label", {}, this.images, " Send charts to the model"),
      el("small", {
        text:
          "Schema and aggregates: the model reads column names, types, row counts and the results" +
          " of aggregations, never row values (values of your files' text columns become «col:NAME»)." +
          " Columns you keep from the model (files panel) are kept in either mode. You still see everything.",
      }),
    );
  }
}
