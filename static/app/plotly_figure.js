// A plotly figure drawn with nothing fetched from elsewhere. The session page draws its figures
// with it (render.js), and the exported HTML report carries this file whole, inline, to draw its
// own (analyst/sessions/exports/report_scripts.py): one way to make a figure safe, not two.

/** Draw ``fig`` (a figure's JSON, or its text) into ``box`` with ``Plotly``; its promise. */
export function drawFigure(Plotly, box, fig) {
  const { data, layout } = withoutRemoteUrls(typeof fig === "string" ? JSON.parse(fig) : fig);
  return Plotly.newPlot(box, data, { ...layout, autosize: true }, PLOTLY_CONFIG);
}

// Ours alone (not the figure's): nothing may send the data to plotly's cloud, and a geo map reads
// its outlines (world_110m.json...) from our own static files (scripts/vendor-js), never from
// plotly's CDN.
const PLOTLY_CONFIG = {
  responsive: true,
  displaylogo: false,
  showSendToCloud: false,
  showEditInChartStudio: false,
  showLink: false,
  sendData: false,
  topojsonURL: "/static/vendor/topojson/",
};

// A map's style names where its tiles, glyphs and sprites come from: every named style fetches
// from a tile server (even "white-bg" names a glyph server), so every map gets this blank one.
const BLANK_MAP_STYLE = {
  version: 8,
  sources: {},
  layers: [{ id: "background", type: "background", paint: { "background-color": "#ffffff" } }],
};
const MAP_SUBPLOT = /^map(box)?\d*$/;
const MAP_TRACE = /^(?:scatter|choropleth|density)(map(?:box)?)$/;

/**
 * A figure's data and layout with nothing plotly.js would fetch from elsewhere: no remote
 * layout.images / image trace / map layer source (data: only), no geojson by URL, a blank style
 * on every map (layout.map*, layout.mapbox*, and those only traces name), and no rich-text style
 * that could load something (url(...)). Templates are scrubbed with the rest.
 */
function withoutRemoteUrls(fig) {
  const data = Array.isArray(fig.data) ? fig.data.map((trace) => scrubbed(trace)) : [];
  const layout = scrubbed(fig.layout ?? {});
  const maps = Object.keys(layout).filter((key) => MAP_SUBPLOT.test(key));
  for (const trace of data) {
    const kind = String(trace?.type ?? "").match(MAP_TRACE)?.[1];
    if (kind) maps.push(trace.subplot ?? kind);
  }
  for (const key of new Set(maps)) layout[key] = { ...layout[key], style: BLANK_MAP_STYLE };
  return { data, layout };
}

function scrubbed(value) {
  if (typeof value === "string") return safeRichText(value);
  if (Array.isArray(value)) return value.map(scrubbed);
  if (!value || typeof value !== "object") return value;
  const copy = {};
  for (const [name, item] of Object.entries(value)) {
    if (name === "style") continue; // plotly's one `style` is a map's: ours replaces it
    if (name === "source" || name === "geojson") {
      if (inline(item)) copy[name] = typeof item === "string" ? item : scrubbed(item);
    } else if (name !== "sourceattribution" || !String(item).includes("<")) {
      copy[name] = scrubbed(item); // (an attribution's HTML is drawn by the map library)
    }
  }
  return copy;
}

/** A source plotly can draw without fetching: a data: URL, or data itself (GeoJSON). */
function inline(source) {
  if (typeof source === "string") return /^\s*data:/i.test(source);
  if (Array.isArray(source)) return source.every(inline);
  return true;
}

// Plotly's rich text (titles, labels, annotations, hover) keeps <span style="...">, and CSS can
// fetch: cursor: url(...), fill: url(other.svg#paint), image-set(...); an escape or an entity
// could spell any of them. Colours and fonts stay; a style that could fetch goes.
const STYLE_IN_TAG = /(^|[\s"'])style\s*=\s*("[^"]*"|'[^']*')/gi;

function safeRichText(text) {
  if (!text.includes("<")) return text;
  return text.replace(/<[^<>]*>/g, (tag) =>
    tag.replace(STYLE_IN_TAG, (whole, before, css) => (cssMayFetch(css) ? before : whole)),
  );
}

const cssMayFetch = (css) => /[(\\&@]/.test(css.replace(/\b(?:rgba?|hsla?)\(/gi, ""));
