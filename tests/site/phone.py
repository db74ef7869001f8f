"""Measures of a built page as a reader on a phone, a slow laptop or a screen reader gets it.

Used by ``tests/site/test_phone.py`` (``make test`` checks every measure but the timing; ``make
measure`` takes the timing and screenshots), and on its own to print the table of every lesson's checks::

    python -m tests.site.phone [_build/html]

Each measure opens the page in a fresh browser context (a first visit: nothing cached):

- ``overflow_px``: how far the page scrolls sideways at 390 × 844 (0: it does not);
- ``overlaps``: parts of a figure (title, legend, axis titles, panel titles, menus, slider, mode
  bar) that meet one another or leave the figure, and labels at data points or data coordinates
  (point labels, arrow labels, heatmap values) that meet one another, at 390 × 844 and 1366 × 900;
- ``small_text``: figure texts (heatmap values among them) drawn smaller than ``MIN_TEXT_PX``;
- ``weight_bytes``: bytes transferred for the page and all it loads, as served gzip-compressed;
- ``fcp_ms``: first contentful paint with the CPU slowed 4× (Chrome DevTools Protocol), a measure,
  and ``before_paint``, what those visits fetched before it, with the screenshots:
  :func:`reader_measures`, ``make measure``'s;
- ``axe``: axe-core violations (its default rules and the experimental ones of
  :data:`EXPERIMENTAL_AXE_RULES`) at phone width and at 1366 px, light and dark (a full run at each
  width, its colour rules in the other theme: :func:`measure`), by where they were seen; ``dark``:
  what dark mode leaves light or illegible;
- ``errors``, ``external``, ``formulas``/``typeset``/``merror``, ``figures_drawn``, ``legends``: what a
  first visit meets (console and page errors, requests leaving the machine), MathJax's work, the
  figures drawn and their legends' styles (``tests/site/test_site.py`` asserts them).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
MIN_TEXT_PX = 9.5  # a figure's smallest readable text (course-figures.js writes heatmap values at 10 px or more)
CPU_SLOWDOWN = 4
FCP_VISITS = 5  # first visits per first-paint timing, of which the median is kept
FCP_BUDGET_MS = 1800  # web.dev's "good" first paint (https://web.dev/articles/fcp), which Lighthouse
# measures with the same 4× CPU slowdown (and a slowed network besides): a budget the table flags
THEME_PAGE = "genindex.html"  # the theme's stylesheets and scripts with next to nothing of the course's

# Every figure is drawn: course-figures.js says so, or (a site without it) every div has its svg.
FIGURES_DRAWN = """() => document.documentElement.dataset.figuresDrawn !== undefined
  || ![...document.querySelectorAll('div.plotly-graph-div')].some(div => !div.querySelector('svg.main-svg'))"""

# MathJax has started where the page loads it (after the first paint, course-after-paint.js): until its
# script runs, window.MathJax is only its configuration.
MATHJAX_STARTED = """() => !document.querySelector('script[data-src*="mathjax"], script[src*="mathjax"]')
  || Boolean(window.MathJax && MathJax.startup && MathJax.startup.promise)"""


def settle(tab, timeout: int = 30_000) -> None:
    """Wait until the page has settled: its formulas typeset (where it loads MathJax) and every figure
    drawn. (A wait_for_function predicate cannot be async: the promise it returns is truthy at once.)"""
    tab.wait_for_function(MATHJAX_STARTED, timeout=timeout)
    tab.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise.then(() => true)")
    tab.wait_for_function(FIGURES_DRAWN, timeout=timeout)


# The head's scripts that block rendering, as the page is served (the parser's, not those added later by
# a script, which never block): neither deferred nor async.
RENDER_BLOCKING_SCRIPTS = """async () => {
  const served = new DOMParser().parseFromString(await (await fetch(location.href)).text(), 'text/html');
  return [...served.head.querySelectorAll('script[src]')].filter(s => !s.hasAttribute('defer') && !s.hasAttribute('async'))
    .map(s => new URL(s.getAttribute('src'), location.href).href);
}"""

# The boxes of a figure's parts, in page pixels; pairs that meet, and parts that leave the figure.
FIGURE_OVERLAPS = """() => {
  const parts = div => {
    const found = [];
    const add = (name, el) => {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'
          && getComputedStyle(el).display !== 'none' && el.textContent.trim() !== '' || name === 'mode bar' && r.width > 0) {
        found.push({name: name + ' "' + el.textContent.trim().slice(0, 30) + '"', r});
      }
    };
    div.querySelectorAll('.gtitle').forEach(el => add('title', el));
    div.querySelectorAll('g.legend').forEach(el => add('legend', el));
    div.querySelectorAll('.xtitle, .ytitle').forEach(el => add('axis title', el));
    // panel titles and labels placed on the figure (paper coordinates), not labels of data points
    div.querySelectorAll('g.annotation').forEach(el => {
      const note = ((div.layout || {}).annotations || [])[Number(el.dataset.index)] || {};
      if (note.xref === 'paper' || note.yref === 'paper') add('annotation', el);
    });
    div.querySelectorAll('g.updatemenu-container').forEach(el => add('menu', el));
    div.querySelectorAll('g.slider-container').forEach(el => add('slider', el));
    // the mode bar shows on hover (and on a tap on a touch screen): counted wherever plotly draws one
    div.querySelectorAll('.modebar-container .modebar').forEach(el => add('mode bar', el));
    return found;
  };
  const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const problems = [];
  document.querySelectorAll('div.plotly-graph-div').forEach(div => {
    const box = div.getBoundingClientRect();
    const found = parts(div);
    // the labels written next to data points (scatter text) and at data coordinates (annotations
    // such as arrow labels and heatmap values), one against another
    const shown = el => el.textContent.trim() !== '' && el.getBoundingClientRect().width > 0;
    const labels = [...div.querySelectorAll('.scatterlayer g.textpoint text')].filter(shown)
      .map(el => ({name: 'point label "' + el.textContent.trim().slice(0, 30) + '"', r: el.getBoundingClientRect()}))
      .concat([...div.querySelectorAll('g.annotation')].filter(el => {
        const note = ((div.layout || {}).annotations || [])[Number(el.dataset.index)] || {};
        return note.xref !== 'paper' && note.yref !== 'paper' && shown(el);
      }).map(el => ({name: 'label "' + el.textContent.trim().slice(0, 30) + '"',
                     r: (el.querySelector('text') || el).getBoundingClientRect()})));
    labels.forEach((a, i) => labels.slice(i + 1).forEach(b => {
      if (meet(a.r, b.r)) problems.push(`${div.id}: ${a.name} meets ${b.name}`);
    }));
    found.forEach((a, i) => {
      if (a.r.left < box.left - 1 || a.r.right > box.right + 1) problems.push(`${div.id}: ${a.name} leaves the figure`);
      found.slice(i + 1).forEach(b => {
        if (meet(a.r, b.r)) problems.push(`${div.id}: ${a.name} meets ${b.name}`);
      });
    });
  });
  return problems;
}"""

# Issue 59's figure check: text on text, lines, arcs, arrows and box edges; arrowheads in boxes; text
# past the figure's edge; a figure wider than its box; a title that leaves the figure after a slider or
# menu step. Run as drawn and after every step of every control (figure_geometry.js says how).
FIGURE_GEOMETRY = (Path(__file__).parent / "figure_geometry.js").read_text(encoding="utf-8")


def figure_geometry(tab, *, steps: bool = True) -> list[dict]:
    """The drawing problems of every figure on ``tab`` (:data:`FIGURE_GEOMETRY`): dicts of ``index`` (the
    figure's number on the page, 1 for the first), ``state`` ("as drawn" or the control step), ``kind``
    and ``what``. The figures are left as they opened."""
    return tab.evaluate(FIGURE_GEOMETRY, {"steps": steps})


SMALL_TEXT = f"""() => [...document.querySelectorAll('div.plotly-graph-div svg text')]
  .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
  .filter(t => parseFloat(getComputedStyle(t).fontSize) < {MIN_TEXT_PX})
  .map(t => `${{t.closest('div.plotly-graph-div').id}}: "${{t.textContent.slice(0, 20)}}" at ${{getComputedStyle(t).fontSize}}`)"""

TRANSFERRED = """() => {
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
  return [entries.reduce((sum, e) => sum + (e.transferSize || 0), 0), entries.reduce((sum, e) => sum + (e.decodedBodySize || 0), 0)];
}"""

# In dark mode: figures whose background stays light, figure texts under 4.5:1 against what is
# behind them (the figure's background, or an annotation's own box, or a filled shape, a diagram's),
# and lines under 3:1 against the background.
DARK_FIGURES = """() => {
  // "rgb(30, 34, 40)" as getComputedStyle gives it, or "#1e2228" as plotly's layout holds it
  const rgb = c => {
    const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(c.trim());
    if (hex) { const h = hex[1].length === 3 ? hex[1].replace(/./g, '$&$&') : hex[1];
               return [0, 2, 4].map(i => parseInt(h.substr(i, 2), 16)); }
    const v = (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
    if (v.length !== 3) throw new Error(`not a colour: ${c}`);
    return v;
  };
  const lum = c => {
    const [r, g, b] = rgb(c).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const filled = el => { const s = getComputedStyle(el); return s.fill.startsWith('rgb') && Number(s.fillOpacity) > 0.5 ? s.fill : null; };
  const behind = (t, div, bg) => {
    const box = t.closest('g.annotation') && t.closest('g.annotation').querySelector('rect.bg');
    if (box && filled(box)) return filled(box);
    const r = t.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    let found = bg;  // the last filled shape drawn under the text's centre, else the background
    div.querySelectorAll('.shapelayer path').forEach(p => {
      const b = p.getBoundingClientRect();
      if (filled(p) && x >= b.left && x <= b.right && y >= b.top && y <= b.bottom) found = filled(p);
    });
    return found;
  };
  const problems = [];
  document.querySelectorAll('div.plotly-graph-div').forEach(div => {
    const paper = div.querySelector('rect.bg') ? getComputedStyle(div.querySelector('svg.main-svg')).backgroundColor : '';
    const bg = (div._fullLayout || {}).paper_bgcolor || paper;
    if (!bg || lum(bg) > 0.2) { problems.push(`${div.id}: background ${bg} in dark mode`); return; }
    div.querySelectorAll('.gtitle, .xtitle, .ytitle, .xtick text, .ytick text, .legendtext, g.annotation text').forEach(t => {
      if (!t.textContent.trim()) return;  // an empty text (a spacer annotation) cannot be illegible
      const fill = getComputedStyle(t).fill, under = behind(t, div, bg);
      if (fill && fill.startsWith('rgb') && ratio(fill, under) < 4.5) {
        problems.push(`${div.id}: "${t.textContent.slice(0, 20)}" ${fill} on ${under}: ${ratio(fill, under).toFixed(1)}:1`);
      }
    });
    // lines (traces, reference lines, outlines, arrows) under 3:1, WCAG's contrast for graphics
    div.querySelectorAll('.scatterlayer .js-line, .shapelayer path, g.annotation path').forEach(p => {
      const s = getComputedStyle(p);
      if (!s.stroke.startsWith('rgb') || parseFloat(s.strokeWidth) === 0 || Number(s.strokeOpacity) === 0) return;
      if (ratio(s.stroke, bg) < 3) problems.push(`${div.id}: a line ${s.stroke} on ${bg}: ${ratio(s.stroke, bg).toFixed(1)}:1`);
    });
  });
  return problems;
}"""


def open_page(browser, url: str, viewport: dict, *, phone: bool = False, dark: bool = False, watch: dict | None = None):
    """A fresh context (no cache) showing ``url`` settled (:func:`settle`); returns (context, tab).
    With ``watch`` (a dict), the visit is watched as :func:`watch_visit` says."""
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1)
    if dark:
        context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    tab = context.new_page()
    if watch is not None:
        watch_visit(tab, watch)
    tab.goto(url, wait_until="networkidle")  # networkidle: index.html redirects
    settle(tab)
    tab.wait_for_timeout(200)
    return context, tab


def watch_visit(tab, seen: dict) -> None:
    """Record in ``seen`` what a visit of ``tab`` meets: ``errors`` (console errors, page errors, failed
    requests) and ``external`` (requests to any host but this machine's, blocked: the site must work
    with no network at all). No error is recorded while ``seen["paused"]``: axe-core's own fetches (it
    asks for the theme's ``@import``ed ``basic.css`` at the wrong address, a 404) are not the page's."""
    from urllib.parse import urlsplit

    errors, external = seen.setdefault("errors", []), seen.setdefault("external", [])

    def error(text: str) -> None:
        if not seen.get("paused"):
            errors.append(text)

    def route(route):
        host = urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost") or route.request.url.startswith("data:"):
            route.continue_()
        else:
            external.append(route.request.url)
            route.abort()

    tab.route("**/*", route)
    tab.on("console", lambda msg: error(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    tab.on("pageerror", lambda exc: error(f"page error: {exc}"))
    tab.on("requestfailed", lambda req: error(f"request failed: {req.url}") if req.url not in external else None)


# The theme's own switch (pydata-sphinx-theme's button cycles auto, light, dark), pressed until the
# page is in ``theme``; then, on a page with figures, the wait until course-figures.js has redrawn
# them all in its colours.
SWITCH_THEME = """(theme) => {
  const button = document.querySelector('.theme-switch-button');
  for (let i = 0; i < 3 && document.documentElement.dataset.theme !== theme; i++) button.click();
  return document.documentElement.dataset.theme;
}"""
FIGURES_IN_THEME = """(theme) => document.documentElement.dataset.figuresDrawn === undefined
  || document.documentElement.dataset.figuresTheme === theme"""


def switch_theme(tab, theme: str) -> None:
    """Switch the open page to ``theme`` ("light" or "dark") as a reader does, with the theme's button:
    the same page in the other colours (a theme changes colours only, never a box)."""
    now = tab.evaluate(SWITCH_THEME, theme)
    assert now == theme, f"{tab.url}: the theme's switch did not reach {theme} (it shows {now})"
    tab.wait_for_function(FIGURES_IN_THEME, arg=theme, timeout=30_000)
    tab.wait_for_timeout(100)


# What axe-core checks that a theme changes: the colours of text against its background, and of links
# against the text around them. A full run
# at each width (the theme's markup differs by width) and this rule in the other theme prove what a
# full run at each width in each theme did.
CONTRAST_RULES = ["color-contrast", "link-in-text-block"]

# Each legend entry of a figure, as drawn: its line's colour and dash, its marker's colour and shape.
LEGEND_STYLES = """() => [...document.querySelectorAll('div.plotly-graph-div')].map(div => ({
  title: (div.querySelector('.gtitle') || {}).textContent || '',
  items: [...div.querySelectorAll('g.legend g.traces')].map(item => {
    const line = item.querySelector('g.legendlines path');
    const point = item.querySelector('g.legendpoints path');
    return {
      name: (item.querySelector('text.legendtext') || {}).textContent || '',
      line: line ? [getComputedStyle(line).stroke, getComputedStyle(line).strokeDasharray] : null,
      point: point ? [getComputedStyle(point).fill, (point.getAttribute('d') || '').slice(0, 8)] : null,
    };
  }),
}))"""


def _formulas(tab) -> dict:
    """``formulas`` on the page, how many MathJax ``typeset``, and ``merror``, those it failed."""
    result = {"formulas": tab.locator(".math").count(), "typeset": 0, "merror": 0}
    if result["formulas"]:
        tab.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000)
        tab.evaluate("() => MathJax.startup.promise")
        result["typeset"] = tab.locator("mjx-container svg").count()
        result["merror"] = tab.locator("mjx-merror").count()
    return result


def first_contentful_paint(browser, url: str, runs: int = FCP_VISITS) -> dict:
    """A first visit's first contentful paint, the CPU slowed ``CPU_SLOWDOWN`` times, over ``runs``
    visits, each in a fresh context (nothing cached): ``fcp_ms``, the median in milliseconds, and
    ``before_paint``, the files any visit fetched before its paint (their names, without the query).

    A timing, so a measure, not a check: on the 2-core development machine the theme alone (its 470 kB
    of stylesheets: the page ``THEME_PAGE``, with no lesson on it) paints at 1.0–1.6 s (medians of
    seven visits, in different minutes), the medians of five visits of one lesson moved from 1.8 to
    1.3 s between two runs minutes apart, and a lesson added 0–0.3 s to the theme's paint in visits
    taken in turn. What the course
    controls is checked from the same visits: nothing of its own is fetched before the paint."""
    visits = [_first_contentful_paint(browser, url) for _ in range(runs)]
    return {"fcp_ms": sorted(fcp for fcp, _ in visits)[runs // 2],
            "before_paint": sorted({name for _, names in visits for name in names})}


def _first_contentful_paint(browser, url: str) -> tuple[float, list[str]]:
    context = browser.new_context(viewport=LAPTOP)
    tab = context.new_page()
    cdp = context.new_cdp_session(tab)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    tab.goto(url, wait_until="commit")  # the paint is what is timed, not the rest of the page's loading
    fcp, before = tab.evaluate(
        "() => new Promise(done => { const seen = () => performance.getEntriesByName('first-contentful-paint');"
        " const report = () => { const fcp = seen()[0].startTime; done([fcp, performance.getEntriesByType('resource')"
        "   .filter(e => e.startTime < fcp).map(e => e.name.split('/').pop().split('?')[0])]); };"
        " if (seen().length) return report();"
        " new PerformanceObserver(report).observe({type: 'paint', buffered: true}); })"
    )
    context.close()
    return float(fcp), before


# A control's accessible name contains the label it shows (WCAG 2.5.3, "label in name"): a speech
# user says what they see. Experimental in axe-core, so enabled by name.
EXPERIMENTAL_AXE_RULES = ("label-content-name-mismatch",)


def axe_violations(tab, rules: list[str] | None = None) -> list[dict]:
    """axe-core's violations of the page (of ``rules`` only, when given; else of its default rules and
    :data:`EXPERIMENTAL_AXE_RULES`): ``id``, ``impact`` and the selectors of the nodes."""
    from axe_playwright_python.sync_playwright import Axe

    options = {"resultTypes": ["violations"]}  # axe_playwright_python's default: not the passes
    if rules:
        options["runOnly"] = {"type": "rule", "values": rules}
    else:  # axe-core's experimental rules that the site must pass as well
        options["rules"] = {rule: {"enabled": True} for rule in EXPERIMENTAL_AXE_RULES}
    results = Axe().run(tab, options=options)
    return [
        {"id": v["id"], "impact": v["impact"], "targets": [" ".join(map(str, n["target"])) for n in v["nodes"]]}
        for v in results.response["violations"]
    ]


def _unwatched(seen: dict, function, *args):
    """``function(*args)`` with the visit's error watch paused (:func:`watch_visit`)."""
    seen["paused"] = True
    try:
        return function(*args)
    finally:
        seen["paused"] = False


def measure(browser, base_url: str, page: str) -> dict:
    """The checks of ``page`` (a path under the site) as a phone and a laptop show it, light and dark:
    everything above but ``fcp_ms``, a timing (:func:`reader_measures`).

    Two first visits, each watched (:func:`watch_visit`): a phone's (390 × 844, touch) in light mode and
    a laptop's (1366 × 900) in dark mode. Each takes a full axe-core run, then switches to the other
    theme (:func:`switch_theme`) for what a theme changes: axe-core's colour rules (:data:`CONTRAST_RULES`)
    and the figures' colours. So both widths are seen in both themes, the figures drawn in dark mode
    both at first (the laptop's) and after a switch (the phone's)."""
    url = f"{base_url}/{page}"
    result: dict = {"page": page, "axe": {}}
    seen: dict = {}
    context, tab = open_page(browser, url, PHONE, phone=True, watch=seen)
    # against the phone's width: a phone browser widens its layout viewport to fit a too-wide page
    result["overflow_px"] = tab.evaluate(
        f"() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - {PHONE['width']}"
    )
    result["overlaps"] = tab.evaluate(FIGURE_OVERLAPS)
    result["geometry"] = [dict(problem, width="phone") for problem in figure_geometry(tab)]
    result["small_text"] = tab.evaluate(SMALL_TEXT)
    result["weight_bytes"], result["decoded_bytes"] = tab.evaluate(TRANSFERRED)
    result["render_blocking_scripts"] = tab.evaluate(RENDER_BLOCKING_SCRIPTS)
    # the course's own scripts (plotly.js, MathJax, course-*.js); the theme's small scripts are its own
    result["blocking_course_scripts"] = [
        src for src in result["render_blocking_scripts"] if re.search(r"plotly|mathjax|/course-", src, re.IGNORECASE)
    ]
    result["axe"]["phone"] = _unwatched(seen, axe_violations, tab)
    switch_theme(tab, "dark")
    result["dark"] = [f"phone, switched: {problem}" for problem in tab.evaluate(DARK_FIGURES)]
    result["axe"]["phone, dark"] = _unwatched(seen, axe_violations, tab, CONTRAST_RULES)
    context.close()
    # the laptop's overlaps are measured in dark mode, which is drawn from the same boxes
    context, tab = open_page(browser, url, LAPTOP, dark=True, watch=seen)
    result["overlaps"] += [f"laptop: {problem}" for problem in tab.evaluate(FIGURE_OVERLAPS)]
    result["geometry"] += [dict(problem, width="laptop") for problem in figure_geometry(tab)]
    result["dark"] += tab.evaluate(DARK_FIGURES)
    result["axe"]["laptop, dark"] = _unwatched(seen, axe_violations, tab)
    switch_theme(tab, "light")
    result["axe"]["laptop"] = _unwatched(seen, axe_violations, tab, CONTRAST_RULES)
    # what a laptop reader sees: every formula typeset, every figure drawn, the legends' styles
    result.update(_formulas(tab))
    result["figures_drawn"] = tab.evaluate(
        "() => [...document.querySelectorAll('div.plotly-graph-div')]"
        ".filter(div => div.querySelector('svg.main-svg') && div.getBoundingClientRect().height > 100).length"
    )
    result["legends"] = tab.evaluate(LEGEND_STYLES)
    context.close()
    result["errors"], result["external"] = seen["errors"], seen["external"]
    return result


def reader_measures(browser, base_url: str, page: str, screenshots: Path, *, timed: bool = True) -> dict:
    """What ``make measure`` measures (the checks of :func:`measure` are ``make test``'s): screenshots
    of the page and of each figure at phone and laptop width and in dark mode, and of the page in
    greyscale, saved under ``screenshots`` for a person; ``weight_bytes`` and ``decoded_bytes`` (a
    first visit's); ``figures``, how many figures are on the page; and, when ``timed``, ``fcp_ms`` and
    ``before_paint`` (:func:`first_contentful_paint`)."""
    url = f"{base_url}/{page}"
    result: dict = {"page": page}
    for folder, viewport, options in (("phone", PHONE, {"phone": True}), ("laptop", LAPTOP, {}),
                                      ("dark", LAPTOP, {"dark": True})):
        context, tab = open_page(browser, url, viewport, **options)
        result["figures"] = _screenshots(tab, screenshots / folder, page)
        if folder == "laptop":
            result["weight_bytes"], result["decoded_bytes"] = tab.evaluate(TRANSFERRED)
            tab.evaluate("() => { document.documentElement.style.filter = 'grayscale(100%)'; }")
            _screenshots(tab, screenshots / "greyscale", page, figures=False)
        context.close()
    if timed:
        result.update(first_contentful_paint(browser, url))
    return result


def _screenshots(tab, folder: Path, page: str, *, figures: bool = True) -> int:
    """The whole page, and each figure on its own (``<page>-figure-<n>.png``); returns how many figures
    were shot."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = Path(page).stem
    tab.screenshot(path=str(folder / f"{stem}.png"), full_page=True)
    shot = 0
    if figures:  # the theme's sticky header would cover the top of a figure scrolled into view
        tab.add_style_tag(content=".bd-header, .skip-link, .bd-header-article { visibility: hidden !important; }")
        for n, div in enumerate(tab.locator("div.plotly-graph-div").all(), start=1):
            if div.is_visible():  # a figure folded in a closed "Going further" block is not on the page
                div.screenshot(path=str(folder / f"{stem}-figure-{n}.png"))
                shot += 1
    return shot


def all_violations(result: dict) -> list[dict]:
    """Every axe-core violation of a page's :func:`measure`, each with ``seen``: the width and mode."""
    return [{**v, "seen": where} for where, violations in result["axe"].items() for v in violations]


def impacts(violations: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for violation in violations:
        counts[violation["impact"]] = counts.get(violation["impact"], 0) + len(violation["targets"])
    return counts


def table(results: list[dict]) -> str:
    """A markdown table of :func:`measure`'s checks, one row per page."""
    rows = ["| page | weight (gzip) | uncompressed | phone overflow | overlaps | small text | axe serious/critical |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        counts = impacts(all_violations(r))
        rows.append(
            f"| {Path(r['page']).stem} | {r['weight_bytes'] / 2**20:.2f} MB | {r['decoded_bytes'] / 2**20:.2f} MB "
            f"| {r['overflow_px']} px | {len(r['overlaps'])} | {len(r['small_text'])} "
            f"| {counts.get('serious', 0)}/{counts.get('critical', 0)} |"
        )
    return "\n".join(rows)


def reader_table(results: list[dict], theme_fcp_ms: float | None = None) -> str:
    """A markdown table of :func:`reader_measures`, one row per page, a first paint over
    ``FCP_BUDGET_MS`` flagged; under it the theme page's own first paint (``theme_fcp_ms``), when given."""
    rows = [f"| page | weight (gzip) | uncompressed | first paint, CPU {CPU_SLOWDOWN}× (median of {FCP_VISITS}) | figures shot |",
            "|---|---|---|---|---|"]
    for r in results:
        fcp = r.get("fcp_ms")
        flag = f" (over the {FCP_BUDGET_MS / 1000:.1f} s budget)" if fcp is not None and fcp > FCP_BUDGET_MS else ""
        rows.append(f"| {Path(r['page']).stem} | {r['weight_bytes'] / 2**20:.2f} MB | {r['decoded_bytes'] / 2**20:.2f} MB "
                    f"| {_ms(fcp)}{flag} | {r['figures']} |")
    if theme_fcp_ms is not None:
        rows.append(f"\nThe theme alone ({THEME_PAGE}, its stylesheets and scripts with no lesson): first paint "
                    f"{_ms(theme_fcp_ms)}, CPU {CPU_SLOWDOWN}×, median of {FCP_VISITS}, measured in the same run.")
    return "\n".join(rows)


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f} ms"


def main(site: Path) -> None:
    from tests.site.conftest import launch_chromium, serve

    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if not p.relative_to(site).parts[0].startswith("_") and re.search(r"lessons/|book/", p.as_posix()))
    with serve(site) as base_url, launch_chromium() as browser:
        results = [measure(browser, base_url, page) for page in pages]
    print(table(results))
    for r in results:
        for key in ("overlaps", "small_text", "dark"):
            for problem in r[key][:6]:
                print(f"{Path(r['page']).stem} {key}: {problem}")
        for v in all_violations(r):
            if v["impact"] in ("serious", "critical"):
                print(f"{Path(r['page']).stem} axe ({v['seen']}) {v['impact']} {v['id']}: {v['targets'][:3]}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html").resolve())
