// The header's bell on every page: the unread count (rendered with the page, kept live by the
// session page's socket through the "analyst:notifications" event), and the notifications listed
// when it opens, each a link to the comment it is about (marked read as it is followed).
import { Api } from "./api.js";
import { el } from "./dom.js";

const LIST = "/api/notifications?limit=20";

class Bell {
  constructor(button, panel) {
    Object.assign(this, { button, panel });
    this.count = button.querySelector(".bell-count");
    this.api = new Api(panel.dataset.csrfToken);
    panel.addEventListener("toggle", (e) => {
      if (e.newState === "open") this.load();
    });
    window.addEventListener("analyst:notifications", (e) => {
      this.show(e.detail.unread);
      if (panel.matches(":popover-open")) this.load();
    });
  }

  show(unread) {
    const n = Number(unread) || 0;
    this.count.textContent = String(n);
    this.count.hidden = n === 0;
    this.button.setAttribute("aria-label", `Notifications, ${n} unread`);
  }

  async load() {
    try {
      const { notifications, unread } = await this.api.get(LIST);
      this.show(unread);
      this.draw(notifications, unread);
    } catch (error) {
      this.panel.replaceChildren(el("p", { class: "error", text: error.message }));
    }
  }

  draw(notifications, unread) {
    const items = notifications.map((n) => this.item(n));
    const list = items.length
      ? el("ul", { class: "notifications-list" }, ...items)
      : el("p", { class: "notifications-empty", text: "No notifications." });
    const all = el("button", { class: "link", testid: "notifications-read-all", text: "Mark all read", attrs: { type: "button" } });
    all.hidden = !unread;
    all.addEventListener("click", async () => {
      await this.api.post("/api/notifications/read");
      this.load();
    });
    this.panel.replaceChildren(el("div", { class: "notifications-head" }, el("strong", { text: "Notifications" }), all), list);
  }

  item(notification) {
    const link = el("a", { testid: "notification", text: notification.text });
    link.href = notification.url;
    const item = el("li", { class: notification.read ? "read" : "unread" }, link);
    if (!notification.read) {
      link.addEventListener("click", async (e) => {
        e.preventDefault();
        try {
          await this.api.post(`/api/notifications/${notification.id}/read`);
        } finally {
          const target = new URL(notification.url, location.href);
          if (target.pathname !== location.pathname) location.assign(target);
          else {
            location.hash = target.hash; // this session's page: its comments scroll there
            this.panel.hidePopover();
            this.load();
          }
        }
      });
    }
    return item;
  }
}

const button = document.querySelector("[data-testid=bell]");
const panel = document.getElementById("notifications");
if (button && panel) new Bell(button, panel);
