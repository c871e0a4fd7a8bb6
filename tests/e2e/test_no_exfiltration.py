"""Nothing the model or a cell writes makes the owner's page or the anonymous share page fetch a
third party without a click: markdown in the answer, a cell's HTML, SVG, markdown and DataFrame
outputs, and plotly figures (layout images, map styles and layers, rich-text styles, geo maps).

The HTML vectors are those of Cure53's HTTPLeaks (github.com/cure53/HTTPLeaks, leak.html: "all
possible ways, in which a website can leak HTTP requests"), pointed at a third party on another
loopback address that records every request it gets. The plotly ones follow the figure
attributes plotly.js fetches from (plotly.com/javascript/reference: layout.images.source,
layout.map.style and layers[].source, choroplethmap.geojson, the topojsonURL config).

The browser contexts bypass the Content-Security-Policy, which would block most of these loads
too: the test proves the sanitizer and the figure scrubbing strip them by themselves. It checks
the network (the third party saw nothing, and every request the page made went to the app) and
the DOM (no attribute names the third party but a link's href, which needs a click).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.model_server import anthropic_text, anthropic_tool_call

PASSWORD = "a-long-passphrase"


class _Recorder(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.paths.append(f"{self.command} {self.path}")  # type: ignore[attr-defined]
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_HEAD = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def third_party() -> Iterator[tuple[str, list[str]]]:
    """A web server on 127.0.0.2 (another origin than the app's): its URL, and every request it got."""
    server = ThreadingHTTPServer(("127.0.0.2", 0), _Recorder)
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_port}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


# HTTPLeaks' body vectors that load without a click, one line of the answer each; then a link
# (which needs one) and a markdown image.
LEAKS = (
    '<video poster="{tp}/video-poster" src="{tp}/video-src"><track src="{tp}/track-src" default></video>',
    '<audio src="{tp}/audio-src" autoplay></audio> <video controls><source src="{tp}/video-source"></video>',
    '<picture><source srcset="{tp}/picture-source-srcset"><img srcset="{tp}/picture-img-srcset"></picture>',
    '<img src="{tp}/img-src"> <img srcset=",,,,,{tp}/img-srcset"> <input type="image" src="{tp}/input-src">',
    '<table background="{tp}/table-background"><tr><td background="{tp}/td-background">in a table</td></tr>'
    "</table>",
    '<b style="background: url({tp}/inline-css-background);'
    ' cursor: url({tp}/inline-css-cursor), auto">MNO</b>',
    '<svg width="20" height="20"><image href="{tp}/svg-image-href" width="9" height="9"></image>'
    '<image xlink:href="{tp}/svg-image-xlink-href"></image></svg>',
    '<svg width="20" height="20"><filter id="f"><feImage href="{tp}/svg-feimage"></feImage></filter>'
    '<rect width="9" height="9" filter="url(#f)"></rect></svg>',
    '<svg width="20" height="20"><rect width="9" height="9" fill="url({tp}/svg-fill#a)"'
    ' mask="url({tp}/svg-mask#m)" clip-path="url({tp}/svg-clip#c)"'
    ' filter="url({tp}/svg-filter#f)"></rect></svg>',
    '<svg><use href="{tp}/svg-use#x"></use>'
    '<image><set attributeName="href" to="{tp}/svg-set"></set></image></svg>',
    '<iframe src="{tp}/iframe-src"></iframe> <embed src="{tp}/embed-src">'
    ' <object data="{tp}/object-data"></object>',
    '<link rel="stylesheet" href="{tp}/link-stylesheet"> <link rel="prefetch" href="{tp}/link-prefetch">',
    '<meta http-equiv="refresh" content="0; url={tp}/meta-refresh">',
    '<math><mglyph src="{tp}/mathml-mglyph"></mglyph></math>',
    '<a href="{tp}/a-link" ping="{tp}/a-ping">a link, for a click</a>',
)


def hostile_markdown(tp: str) -> str:
    leaks = "\n".join(line.format(tp=tp) for line in LEAKS)
    return (
        f"Here is what I found, **in bold** and plain.\n\n{leaks}\n\n"
        f"![a markdown image]({tp}/markdown-image)\n\nThe end of the answer.\n"
    )


# A cell showing HTML, SVG, markdown, two DataFrames and four plotly figures, all naming TP.
CELL = """from IPython.display import HTML, SVG, Markdown, display
import pandas as pd
import plotly.graph_objects as go
display(HTML(
    f'<table background="{TP}/html-table-background"><tr><td background="{TP}/html-td-background"'
    f' style="background: url({TP}/html-td-style)">an html cell</td></tr></table>'
    f'<img src="{TP}/html-img"><video poster="{TP}/html-video-poster"></video>'
    f'<svg><image href="{TP}/html-svg-image"></image></svg><link rel="stylesheet" href="{TP}/html-link">'
    f'<style>td {{ background: url({TP}/html-style-element) }}</style>'
))
display(SVG(
    f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="60"'
    f' height="30"><rect width="60" height="30" fill="teal"/><image href="{TP}/svg-output-image"'
    f' width="9" height="9"/><image xlink:href="{TP}/svg-output-xlink" width="9" height="9"/></svg>'
))
display(Markdown(
    f'A markdown output <video poster="{TP}/markdown-output-poster"></video>'
    f' <svg><image href="{TP}/markdown-output-svg"></image></svg>'
))
df = pd.DataFrame({'region': ['north', 'south'],
                   'note': [f'<img src="{TP}/df-img">', f'<video poster="{TP}/df-poster">']})
display(df)
display(HTML(df.to_html(escape=False)))
go.Figure(
    go.Bar(x=['north', 'south'], y=[10, 32]),
    layout=dict(
        title=dict(text=f'Sales <span style="cursor: url({TP}/plotly-cursor), auto;'
                        f' fill: url({TP}/plotly-fill#a)">by region</span>'),
        images=[dict(source=f'{TP}/plotly-layout-image', xref='paper', yref='paper', x=0, y=1,
                     sizex=0.4, sizey=0.4)],
    ),
).show()
go.Figure(
    go.Scattermap(lat=[45.76], lon=[4.84], mode='markers'),
    layout=dict(map=dict(
        style=f'{TP}/plotly-map-style.json', center=dict(lat=45.76, lon=4.84), zoom=4,
        layers=[dict(sourcetype='geojson', source=f'{TP}/plotly-map-layer.geojson', type='fill'),
                dict(sourcetype='raster', source=[TP + '/plotly-map-tiles/{z}/{x}/{y}.png'])],
    )),
).show()
go.Figure(go.Scattermap(lat=[48.85], lon=[2.35])).show()  # plotly's default style: a tile server's
go.Figure([go.Choropleth(locations=['FRA', 'DEU'], z=[1, 2]),  # outlines from plotly's CDN by default
           go.Scattergeo(lat=[48.85], lon=[2.35])]).show()
"""


def hostile_cell(tp: str) -> str:
    return f"TP = {tp!r}\n{CELL}"


def log_in(browser: Any, web: str) -> tuple[Any, list[str]]:
    """A page logged in as a new user, in a watched context, and the URLs that context requests."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("alice", password=PASSWORD)
    context, urls = watched_context(browser)
    page = context.new_page()
    page.goto(f"{web}/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("form[data-testid=login-form] button[type=submit]")
    page.wait_for_url(f"{web}/sessions/")
    return page, urls


def watched_context(browser: Any) -> tuple[Any, list[str]]:
    """A browser context without the page's CSP, and the URL of every request it makes."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    return context, urls


# Every attribute in the transcript that names the third party, but a link's href (a click) and
# an SVG drawn as an <img> from a data: URL (an image loads nothing: the browser's rule).
NAMING = """(host) => [...document.querySelectorAll('[data-testid=transcript] *')].flatMap(node =>
    [...node.attributes]
        .filter(a => a.value.includes(host))
        .filter(a => !(node.localName === 'a' && a.name === 'href'))
        .filter(a => !(node.localName === 'img' && a.name === 'src' && a.value.startsWith('data:image/svg')))
        .map(a => `<${node.localName} ${a.name}="${a.value.slice(0, 90)}">`))"""


# Every chart drawn by plotly.js, or given up on (a figure it could not show says so).
CHARTS_SETTLED = """() => [...document.querySelectorAll('[data-testid=plotly-chart]')].filter(
    chart => chart.querySelector('.main-svg, .output-failure')).length"""


def assert_nothing_fetched(page: Any, web: str, tp: str, got: list[str], urls: list[str]) -> None:
    """Once the page has drawn everything: no request reached the third party, none left the app's
    origin, no attribute names the third party (but a link's), and the link needs a click."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("assistant-message").last).to_contain_text("The end of", timeout=90_000)
    expect(page.get_by_test_id("plotly-chart")).to_have_count(4)
    page.wait_for_function(f"({CHARTS_SETTLED})() === 4", timeout=30_000)
    page.wait_for_timeout(1_500)  # time for any fetch a vector would start late (a map's style)

    assert got == [], f"the third party was asked for {got}"
    assert len([url for url in urls if url.endswith("/static/vendor/plotly.min.js")]) == 1  # once, for all
    foreign = [url for url in urls if not re.match(rf"(?:blob:)?{re.escape(web)}/|data:", url)]
    assert foreign == [], f"the page fetched from elsewhere: {foreign}"
    assert page.evaluate(NAMING, "127.0.0.2") == []
    link = page.get_by_test_id("transcript").locator(f"a[href^='{tp}']")
    expect(link).to_have_count(1)
    assert link.get_attribute("rel") == "noopener noreferrer nofollow"
    assert link.get_attribute("target") == "_blank"


def assert_the_rest_is_shown(page: Any, tp: str) -> None:
    """The text, the tables, the SVG and the charts, less what would have fetched."""
    from playwright.sync_api import expect

    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator("strong", has_text="in bold")).to_have_count(1)
    expect(transcript).to_contain_text("in a table")
    expect(transcript).to_contain_text("A markdown output")
    tables = page.get_by_test_id("table-output")
    expect(tables).to_have_count(2)
    expect(tables.nth(0)).to_contain_text("an html cell")
    expect(tables.nth(1).locator("td", has_text="south")).to_have_count(1)
    grid = page.get_by_test_id("data-table")  # display(df): a grid, whose values are text
    expect(grid).to_have_attribute("data-state", "grid")
    expect(grid).to_contain_text(f'<img src="{tp}/df-img">')
    svg = page.get_by_test_id("chart")
    expect(svg).to_have_count(1)
    assert svg.evaluate("img => img.decode().then(() => img.naturalWidth)") == 60
    charts = page.get_by_test_id("plotly-chart")
    expect(charts.nth(0).locator(".barlayer .point")).to_have_count(2)
    expect(charts.nth(0).locator(".gtitle")).to_have_text("Sales by region")
    for map_chart in (charts.nth(1), charts.nth(2)):
        expect(map_chart.locator("canvas.maplibregl-canvas")).to_have_count(1)
    # A geo map draws its outlines from our static files (scripts/vendor-js), never plotly's CDN.
    geo = charts.nth(3)
    expect(geo.locator(".choroplethlocation")).to_have_count(2)  # France and Germany, by ISO code
    expect(geo.locator(".layer.land path")).not_to_have_count(0)
    expect(geo.locator(".scattergeo .point")).to_have_count(1)


def test_what_the_model_or_a_cell_writes_fetches_nothing_from_elsewhere(stack, web, browser, shoot):
    with third_party() as (tp, got):
        stack.script(
            anthropic_tool_call("run_python", {"code": hostile_cell(tp)}, text_before="Let me look."),
            anthropic_text(hostile_markdown(tp)),
        )
        page, urls = log_in(browser, web)
        page.get_by_test_id("new-session").click()
        page.wait_for_url(re.compile(r"/sessions/[0-9a-f-]{36}/$"))
        page.get_by_test_id("composer-input").fill("What is in the data?")
        page.get_by_test_id("composer-input").press("Enter")
        assert_nothing_fetched(page, web, tp, got, urls)
        assert_the_rest_is_shown(page, tp)
        shoot(page, "owner")

        page.get_by_test_id("create-share").click()
        share_url = page.get_by_test_id("share-url").first.input_value()
        viewer, viewer_urls = watched_context(browser)
        shared = viewer.new_page()
        shared.goto(share_url)
        assert_nothing_fetched(shared, web, tp, got, viewer_urls)
        assert_the_rest_is_shown(shared, tp)
        shoot(shared, "shared")
        viewer.close()
        page.context.close()
