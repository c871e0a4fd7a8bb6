// node scripts/topojson-from-plotly.js BUNDLE OUT: the map outlines plotly.js's geo-assets bundle
// carries (world_110m, usa_50m...), each written as OUT/<name>.json, the files a geo map reads
// from its topojsonURL. The bundle is plotly's own script for browsers: run here in a context of
// its own with a stand-in `window`, it sets window.Plotly to {topojson, version}.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [bundle, out] = process.argv.slice(2);
const context = { self: {} };
context.window = context.self;
vm.runInNewContext(fs.readFileSync(bundle, "utf8"), context, { filename: bundle });
const topojson = context.self.Plotly && context.self.Plotly.topojson;
if (!topojson || !topojson.world_110m) {
  console.error(`${bundle} holds no topojson (plotly.js changed how it ships them?)`);
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
for (const [name, value] of Object.entries(topojson)) {
  fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(value));
}
