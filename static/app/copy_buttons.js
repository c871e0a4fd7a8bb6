// The server-rendered Copy buttons of a page (a share link, a new API token): each copies its
// data-copy text.
import { copyOnClick } from "./copy.js";

for (const button of document.querySelectorAll("[data-copy]")) copyOnClick(button, () => button.dataset.copy);
