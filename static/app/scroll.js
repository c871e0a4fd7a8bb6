// Keeps the newest output in view while the reader is at the bottom of the page; scrolling up
// to read stops that until they come back down.
const NEAR = 120; // px from the bottom that still counts as "at the bottom"

export function followBottom(content) {
  const page = document.scrollingElement;
  let following = true;
  let lastTop = page.scrollTop;
  let lastHeight = page.scrollHeight;
  addEventListener(
    "scroll",
    () => {
      // A move up is the reader's only if the page kept its height: content that shrank and
      // grew again (a chart redrawn) moves the page too, and our own scrolls only go down.
      if (page.scrollHeight - page.scrollTop - page.clientHeight < NEAR) following = true;
      else if (page.scrollTop < lastTop && page.scrollHeight === lastHeight) following = false;
      lastTop = page.scrollTop;
      lastHeight = page.scrollHeight;
    },
    { passive: true },
  );
  addEventListener("wheel", (e) => e.deltaY < 0 && (following = false), { passive: true });
  // So is following a link within the page, even one whose target was only just built.
  addEventListener("click", (e) => e.target.closest?.("a[href^='#']") && (following = false));
  // Content grows without a scroll event (new events, images loading, charts drawn).
  new ResizeObserver(() => following && page.scrollTo({ top: page.scrollHeight })).observe(content);
}
