/* Draws the course's figures on the site, fitted to the width each one gets.
 *
 * Loaded after the page's first paint, after its partial plotly.js bundle (course-after-paint.js,
 * course_utils.book), so that a slow phone shows the text first. Every figure
 * is a <div class="course-figure"> followed by <script type="application/json"> holding its spec
 * (data, layout, config), written by course_utils.rendering.site_figure_html. Before drawing, the
 * spec is fitted to the figure's width:
 *
 * - the title wraps at word boundaries (and the top margin grows by the added lines), and so do
 *   the titles its slider steps and menu buttons set, before plotly applies them;
 * - on narrow screens a legend moves under the plot, where it cannot meet the title;
 * - panels that stand side by side stack one above the other on narrow screens (up to 4 panels);
 * - the mode bar is hidden on narrow or touch screens;
 * - point labels that would overlap another label are dropped (every label stays on hover);
 * - heatmap values are written in cells that hold them at MIN_TEXT_PX or more, and are dropped
 *   (values stay on hover) where the cells are smaller;
 * - a builder may give a figure another layout for narrow screens (layout.meta.narrow_layout, e.g.
 *   the learning path in one column); a diagram (hidden axes, boxes drawn as shapes) that has none
 *   is drawn at DIAGRAM_MIN_PX at least and scrolls sideways inside its own box;
 * - an explorer (a figure with a slider or a menu) fits the height of a laptop screen;
 * - log axes spanning a power of ten or more label the powers of ten only (not bare 2 and 5);
 * - in dark mode the figure's background, text and grid follow the page's colours, and so do the
 *   white boxes of diagrams (annotations' backgrounds, filled shapes); a line, an arrow or a label
 *   too dark to read on the page is lightened, its hue kept (legible()).
 *
 * Figures are drawn one per task, so the page paints first; window.courseFigures.ready resolves
 * when every figure is drawn. They are fitted again when the width or the colour mode changes.
 */
(function () {
  "use strict";

  var NARROW_PX = 640; // below this width: legends under the plot, panels stacked, no mode bar
  var MIN_TEXT_PX = 10; // the smallest font a heatmap value is written in
  var STACK_AT_MOST = 4; // panels stacked on narrow screens; larger grids keep their layout
  var PANEL_TITLE_PX = 28; // between stacked panels: a panel's title (one line) ...
  var AXIS_TITLE_PX = 30; // ... the x-axis title of the panel above ...
  var TICK_LABELS_PX = 24; // ... and its tick labels, when they stand level
  var DIAGRAM_MIN_PX = 720; // a diagram narrower than this would write its boxes' text over each other
  var SCREEN_MARGIN_PX = 40; // an explorer leaves this much of the screen's height around it
  var LOG_TICK_PX = 40;
  var LABEL_GAP_PX = 2; // point labels closer than this to another are dropped (kept on hover) // a log axis's labels stand at least this far apart
  var TITLE_TOP_PX = 8; // a title's distance from the top of its figure, at least
  var MODE_BAR_PX = 150; // the mode bar's width, kept free of the title's lines
  var MODE_BAR_DROPPED = ["select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d"];
  var MENU_RAISE_PX = 30; // a raised menu's clearance above the panel titles
  var FONT = '"Open Sans", verdana, arial, sans-serif';
  var DARK = { paper: "#1e2228", text: "#e6e6e6", grid: "#3a4049", line: "#8a929c", menu: "#2c323a" };

  var canvas = document.createElement("canvas").getContext("2d");

  function textWidth(text, sizePx) {
    canvas.font = sizePx + "px " + FONT;
    return canvas.measureText(text.replace(/<[^>]*>/g, "")).width;
  }

  function copy(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function isDark() {
    return document.documentElement.dataset.theme === "dark";
  }

  function titleText(layout) {
    var title = layout.title;
    return title && typeof title === "object" ? title.text || "" : title || "";
  }

  /* Greedy word wrap of plotly rich text into lines no wider than widthPx; explicit <br> kept. */
  function wrap(text, widthPx, sizePx) {
    var lines = [];
    text.split(/<br\s*\/?>/i).forEach(function (paragraph) {
      // spaces inside tags (<span style="...">) are not places to break a line
      var words = paragraph.replace(/<[^>]*>/g, function (tag) { return tag.replace(/ /g, "\u0001"); }).split(" ");
      var line = "";
      words.forEach(function (word) {
        var candidate = line ? line + " " + word : word;
        if (line && textWidth(candidate, sizePx) > widthPx) {
          lines.push(line);
          line = word;
        } else {
          line = candidate;
        }
      });
      lines.push(line);
    });
    return lines.map(function (line) { return line.replace(/\u0001/g, " "); });
  }

  /* The width a title's lines may take: the figure's, less the mode bar's (it shows on hover at
   * the top right). */
  function titleRoom(width, modeBar) {
    return width - 24 - (modeBar ? MODE_BAR_PX : 0);
  }

  /* The titles that the steps of a slider and the buttons of a menu set (method "update": args[1];
   * "relayout": args[0]), as {owner, key}: owner[key] is the title's text. */
  function commandTitles(layout) {
    var commands = [];
    (layout.sliders || []).forEach(function (slider) { commands = commands.concat(slider.steps || []); });
    (layout.updatemenus || []).forEach(function (menu) { commands = commands.concat(menu.buttons || []); });
    var found = [];
    commands.forEach(function (command) {
      var args = command.args || [];
      var change = command.method === "update" ? args[1] : command.method === "relayout" ? args[0] : null;
      if (!change || typeof change !== "object") return;
      if (typeof change["title.text"] === "string") found.push({ owner: change, key: "title.text" });
      if (typeof change.title === "string") found.push({ owner: change, key: "title" });
      else if (change.title && typeof change.title.text === "string") found.push({ owner: change.title, key: "text" });
    });
    return found;
  }

  /* The title wrapped to the figure's width (less the mode bar's), pinned to the top; so are the
   * titles its slider steps and menu buttons set, already wrapped when a step writes one (plotly
   * applies a step's command a frame after its plotly_sliderchange event), the top margin made for
   * the longest. Returns the height the added lines take. */
  function fitTitle(layout, width, modeBar) {
    var text = titleText(layout);
    if (!text) return 0;
    var title = typeof layout.title === "object" ? layout.title : { text: text };
    var size = (title.font && title.font.size) || (width < NARROW_PX ? 15 : 17);
    var room = titleRoom(width, modeBar);
    var before = text.split(/<br\s*\/?>/i).length;
    var lines = wrap(text, room, size);
    var most = lines.length;
    commandTitles(layout).forEach(function (other) {
      var wrapped = wrap(other.owner[other.key], room, size);
      other.owner[other.key] = wrapped.join("<br>");
      most = Math.max(most, wrapped.length);
    });
    title.text = lines.join("<br>");
    title.font = Object.assign({}, title.font, { size: size });
    if (title.y === undefined && most > 1) {
      Object.assign(title, { y: 1, yref: "container", yanchor: "top", pad: { t: 12 } });
    }
    layout.title = title;
    return (most - before) * Math.round(size * 1.3);
  }

  /* x-axis titles wrapped to the figure's width; returns the height their added lines take. */
  function fitAxisTitles(layout, width) {
    var added = 0;
    axisKeys(layout, "x").forEach(function (key) {
      var title = layout[key].title;
      var text = title && (typeof title === "object" ? title.text : title);
      if (!text) return;
      var size = (title.font && title.font.size) || Math.round(((layout.font && layout.font.size) || 12) * 1.2); // plotly's
      // centred on the plot area: no wider than twice its centre's distance to the nearer edge
      var plotWidth = width - layout.margin.l - layout.margin.r;
      var room = plotWidth + 2 * Math.min(layout.margin.l, layout.margin.r) - 10;
      var lines = wrap(text, room, size);
      var extra = (lines.length - text.split(/<br\s*\/?>/i).length) * Math.round(size * 1.3);
      layout[key].title = Object.assign(typeof title === "object" ? title : {}, { text: lines.join("<br>") });
      added = Math.max(added, extra);
    });
    layout.margin.b += added;
    return added;
  }

  /* On a narrow screen, a menu at the top right rises above the panel titles; returns the height added. */
  function fitMenus(layout, width) {
    if (width >= NARROW_PX) return 0;
    var raised = 0;
    (layout.updatemenus || []).forEach(function (menu) {
      if ((menu.y === undefined ? 1 : menu.y) >= 1 && (menu.x === undefined ? -0.05 : menu.x) >= 0.5) {
        menu.pad = Object.assign({}, menu.pad, { b: ((menu.pad || {}).b || 0) + MENU_RAISE_PX });
        menu.yanchor = "bottom";
        raised = MENU_RAISE_PX;
      }
    });
    layout.margin.t += raised;
    return raised;
  }

  function legendEntries(fig) {
    var shown = fig.data.filter(function (trace) {
      var type = trace.type || "scatter";
      return trace.showlegend !== false && (trace.showlegend === true || type === "scatter" || type === "bar");
    });
    if (fig.layout.showlegend === false) return [];
    if (fig.layout.showlegend !== true && shown.length < 2) return [];
    var groups = {};
    return shown.filter(function (trace) {
      var group = trace.legendgroup || trace.name;
      if (groups[group]) return false;
      groups[group] = true;
      return true;
    });
  }

  function isAbovePlot(legend) {
    return legend && legend.orientation === "h" && (legend.y === undefined || legend.y >= 1);
  }

  /* The legend goes under the plot, in rows, on a narrow screen, and at any width where it would
   * stand above the plot (beside the title); returns the height it adds. */
  function fitLegend(fig, width) {
    var entries = legendEntries(fig);
    if (!entries.length || (width >= NARROW_PX && !isAbovePlot(fig.layout.legend))) return 0;
    var size = 12;
    var rows = 1;
    var used = 0;
    var extraLines = 0;
    entries.forEach(function (trace) {
      // a name too long for the width is wrapped (every trace of its group, so hover labels agree)
      var lines = wrap(String(trace.name || ""), width - 80, size);
      if (lines.length > 1) {
        fig.data.forEach(function (other) {
          if (other.name === trace.name) other.name = lines.join("<br>");
        });
        extraLines += lines.length - 1;
      }
      var item = Math.max.apply(null, lines.map(function (line) { return textWidth(line, size); })) + 46;
      if (used && used + item > width - 20) {
        rows += 1;
        used = 0;
      }
      used += item;
    });
    rows += extraLines;
    var legendTitle = fig.layout.legend && fig.layout.legend.title && fig.layout.legend.title.text;
    var height = rows * (size + 10) + 12;
    fig.layout.legend = {
      orientation: "h",
      x: 0,
      xanchor: "left",
      y: 0,
      yanchor: "bottom",
      yref: "container",
      font: { size: size },
      title: legendTitle ? { text: legendTitle, side: "top" } : undefined,
      itemclick: (fig.layout.legend || {}).itemclick,
    };
    if (legendTitle) height += size + 8;
    fig.layout.margin.b = (fig.layout.margin.b || 60) + height;
    return height;
  }

  function axisKeys(layout, letter) {
    return Object.keys(layout).filter(function (key) { return new RegExp("^" + letter + "axis\\d*$").test(key); });
  }

  /* On a narrow screen, panels one above the other (side-by-side ones stacked), each panel title
   * wrapped to the width with room made for its lines above the panel. Grids of more than
   * STACK_AT_MOST panels keep their layout. The added height goes into layout.height. */
  function stackPanels(fig, width) {
    var layout = fig.layout;
    if (width >= NARROW_PX) return;
    var panels = axisKeys(layout, "x").map(function (key) {
      var x = layout[key];
      var yKey = "yaxis" + (x.anchor || "y").slice(1);
      return { key: key, x: x, y: layout[yKey], xd: (x.domain || [0, 1]).slice(), yd: ((layout[yKey] || {}).domain || [0, 1]).slice(), extra: 0 };
    }).filter(function (panel) { return panel.y && panel.x.visible !== false; });
    if (panels.length < 2 || panels.length > STACK_AT_MOST) return;
    var margin = layout.margin;
    var plotHeight = layout.height - margin.t - margin.b;
    var plotWidth = width - (margin.l || 0) - (margin.r || 0);
    panels.sort(function (a, b) { return b.yd[1] - a.yd[1] || a.xd[0] - b.xd[0]; });
    panels.forEach(function (panel) { panel.px = plotHeight * (panel.yd[1] - panel.yd[0]); });
    // Paper-anchored annotations (panel titles) go with the panel they sit on, wrapped to its width.
    var notes = [];
    (layout.annotations || []).forEach(function (note) {
      if (note.xref !== "paper" || note.yref !== "paper" || note.showarrow) return;
      var panel = panels.find(function (p) { return note.x >= p.xd[0] - 1e-6 && note.x <= p.xd[1] + 1e-6 && Math.abs(note.y - p.yd[1]) < 0.2; });
      if (!panel) return;
      var size = Math.min((note.font && note.font.size) || 16, 14);
      var lines = wrap(String(note.text || ""), plotWidth - 10, size);
      note.text = lines.join("<br>");
      note.font = Object.assign({}, note.font, { size: size });
      panel.extra = Math.max(panel.extra, (lines.length - 1) * Math.round(size * 1.3));
      notes.push({ note: note, panel: panel });
    });
    var gaps = panels.map(function (panel, i) {
      return i === 0 ? 0 : panel.extra + PANEL_TITLE_PX + tickLabelsHeight(fig, panels[i - 1], plotWidth) + (panels[i - 1].x.title ? AXIS_TITLE_PX : 0);
    });
    var newHeight = panels.reduce(function (sum, panel, i) { return sum + panel.px + gaps[i]; }, 0);
    var top = newHeight;
    panels.forEach(function (panel, i) {
      top -= gaps[i];
      panel.newYd = [(top - panel.px) / newHeight, top / newHeight];
      top -= panel.px;
    });
    notes.forEach(function (item) {
      var note = item.note;
      var panel = item.panel;
      note.x = (note.x - panel.xd[0]) / (panel.xd[1] - panel.xd[0]);
      note.y = panel.newYd[1] + ((note.y - panel.yd[1]) * plotHeight) / newHeight;
    });
    panels.forEach(function (panel) {
      panel.x.domain = [0, 1];
      panel.y.domain = panel.newYd;
    });
    fig.data.forEach(function (trace) {
      if (trace.colorbar) {
        var yKey = "yaxis" + (trace.yaxis || "y").slice(1);
        var domain = layout[yKey] && layout[yKey].domain;
        if (domain) trace.colorbar = Object.assign({}, trace.colorbar, { x: 1.02, y: (domain[0] + domain[1]) / 2, len: domain[1] - domain[0] });
      }
    });
    margin.t += panels[0].extra;
    layout.height += newHeight - plotHeight + panels[0].extra;
  }

  /* The height an x axis's tick labels take: category labels too long for their slot stand rotated. */
  function tickLabelsHeight(fig, panel, plotWidth) {
    var id = "x" + panel.key.slice(5);
    var labels = [];
    fig.data.forEach(function (trace) {
      if ((trace.xaxis || "x") === id && Array.isArray(trace.x)) labels = labels.concat(trace.x.filter(function (v) { return typeof v === "string"; }));
    });
    if (!labels.length) return TICK_LABELS_PX;
    var longest = Math.max.apply(null, labels.map(function (label) { return textWidth(label, 12); }));
    var slot = plotWidth / new Set(labels).size;
    return longest + 4 > slot ? longest + 12 : TICK_LABELS_PX;
  }

  function narrowMargins(layout, width) {
    var margin = layout.margin;
    if (margin.l === undefined) margin.l = 80;
    if (margin.r === undefined) margin.r = 80;
    if (width >= NARROW_PX) return;
    margin.l = Math.min(margin.l === undefined ? 80 : margin.l, 64);
    margin.r = Math.min(margin.r === undefined ? 80 : margin.r, 24);
  }

  /* A plotly colour ("white", "black", "#fff", "#ffffff", "rgb(...)", an opaque "rgba(...)") as
   * [r, g, b]; null for anything else (a named colour, a transparent one, an array). */
  function rgbOf(color) {
    var c = String(color || "").trim().toLowerCase();
    if (c === "white") return [255, 255, 255];
    if (c === "black") return [0, 0, 0];
    var hex = c.match(/^#([0-9a-f]{3}|[0-9a-f]{6})$/);
    if (hex) {
      var h = hex[1].length === 3 ? hex[1].replace(/./g, "$&$&") : hex[1];
      return [0, 2, 4].map(function (i) { return parseInt(h.substr(i, 2), 16); });
    }
    var m = c.match(/^rgba?\(([^)]+)\)$/);
    if (!m) return null;
    var rgb = m[1].split(",").map(Number);
    return rgb.length > 3 && rgb[3] < 0.5 ? null : rgb.slice(0, 3);
  }

  /* Whether a colour is light (a white box that light text cannot read on). */
  function isLight(color) {
    var rgb = rgbOf(color);
    return rgb !== null && 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 200;
  }

  /* WCAG's contrast ratio of two [r, g, b]. */
  function contrast(a, b) {
    var lum = function (rgb) {
      var v = rgb.map(function (x) { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
      return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
    };
    var hi = Math.max(lum(a), lum(b)), lo = Math.min(lum(a), lum(b));
    return (hi + 0.05) / (lo + 0.05);
  }

  /* ``owner[key]``, a colour, mixed towards white (its hue kept) until it stands ``ratio`` : 1
   * against ``background`` (the dark figure's, unless given): WCAG asks 4.5 of text, 3 of lines.
   * A black reference line, a diagram's black outline or grey arrow, a blue label: all stay legible. */
  function legible(owner, key, ratio, background) {
    var rgb = owner && rgbOf(owner[key]);
    var under = rgbOf(background) || rgbOf(DARK.paper);
    if (!rgb || contrast(rgb, under) >= ratio) return;
    for (var t = 0.05; t <= 1.0001; t += 0.05) {
      var mixed = rgb.map(function (x) { return Math.round(x + (255 - x) * t); });
      if (contrast(mixed, under) >= ratio) { owner[key] = "rgb(" + mixed.join(",") + ")"; return; }
    }
  }

  function darken(fig) {
    var layout = fig.layout;
    layout.paper_bgcolor = DARK.paper;
    layout.plot_bgcolor = DARK.paper;
    layout.font = Object.assign({}, layout.font, { color: DARK.text });
    if (layout.title && typeof layout.title === "object") layout.title.font = Object.assign({}, layout.title.font, { color: DARK.text });
    axisKeys(layout, "x").concat(axisKeys(layout, "y")).forEach(function (key) {
      Object.assign(layout[key], { gridcolor: DARK.grid, zerolinecolor: DARK.line, linecolor: DARK.line });
    });
    if (layout.legend) layout.legend.bgcolor = "rgba(0,0,0,0)";
    (layout.updatemenus || []).forEach(function (menu) {
      Object.assign(menu, { bgcolor: DARK.menu, bordercolor: DARK.line, font: { color: DARK.text } });
    });
    (layout.sliders || []).forEach(function (slider) {
      slider.font = { color: DARK.text };
      slider.currentvalue = Object.assign({}, slider.currentvalue, { font: { color: DARK.text } });
    });
    (layout.annotations || []).forEach(function (note) {
      if (isLight(note.bgcolor)) note.bgcolor = DARK.menu;  // a diagram's white box: light text must read on it
      if (!note.font || !note.font.color) note.font = Object.assign({}, note.font, { color: DARK.text });
      legible(note.font, "color", 4.5, note.bgcolor);
      legible(note, "arrowcolor", 3);
      legible(note, "bordercolor", 3);
    });
    (layout.shapes || []).forEach(function (shape) {
      if (isLight(shape.fillcolor)) shape.fillcolor = DARK.menu;
      legible(shape.line, "color", 3);
    });
    fig.data.forEach(function (trace) {
      legible(trace.line, "color", 3);
      legible(trace.marker, "color", 3);
      legible(trace.marker && trace.marker.line, "color", 3);
      if (trace.textfont && trace.type !== "heatmap") trace.textfont = Object.assign({}, trace.textfont, { color: DARK.text });
      if (trace.mode && trace.mode.indexOf("text") >= 0 && !(trace.textfont && trace.textfont.color)) {
        trace.textfont = Object.assign({}, trace.textfont, { color: DARK.text });
      }
    });
  }

  function isDiagram(layout) {
    var axes = axisKeys(layout, "x").concat(axisKeys(layout, "y"));
    return (layout.shapes || []).length >= 3 && axes.length > 0 && axes.every(function (key) { return layout[key].visible === false; });
  }

  /* The width a figure is drawn at: its box's, or a diagram's minimum (its box then scrolls). */
  function drawingWidth(spec, boxWidth) {
    var layout = spec.layout || {};
    var narrowLayout = layout.meta && layout.meta.narrow_layout;
    if (boxWidth < NARROW_PX && narrowLayout) return boxWidth;
    return isDiagram(layout) ? Math.max(boxWidth, DIAGRAM_MIN_PX) : boxWidth;
  }

  /* An explorer on a laptop screen fits the screen's height: its plot area gives up the excess. */
  function fitScreenHeight(layout, width) {
    var explorer = (layout.sliders || []).length || (layout.updatemenus || []).length;
    var screen = window.innerHeight - SCREEN_MARGIN_PX;
    if (!explorer || width < NARROW_PX || layout.height <= screen) return;
    var plotHeight = layout.height - layout.margin.t - layout.margin.b;
    var excess = Math.min(layout.height - screen, plotHeight * 0.4);
    layout.height -= excess;
  }

  /* The figure's spec fitted to width (px) and the colour mode; spec itself is not changed. */
  function fit(spec, width) {
    var fig = { data: copy(spec.data || []), layout: copy(spec.layout || {}), config: copy(spec.config || {}) };
    var layout = fig.layout;
    if (width < NARROW_PX && layout.meta && layout.meta.narrow_layout) Object.assign(layout, layout.meta.narrow_layout);
    layout.height = layout.height || 450;
    layout.margin = Object.assign({ t: 100, b: 80 }, layout.margin);
    narrowMargins(layout, width);
    var touch = window.matchMedia && window.matchMedia("(hover: none)").matches;
    var modeBar = !(width < NARROW_PX || touch);
    var added = fitTitle(layout, width, modeBar);
    layout.margin.t += added;
    layout.height += added;
    layout.height += fitMenus(layout, width);
    layout.height += fitAxisTitles(layout, width);
    stackPanels(fig, width);
    layout.height += fitLegend(fig, width);
    fitScreenHeight(layout, width);
    fig.titleRoom = titleRoom(width, modeBar);
    fig.config.responsive = true;
    fig.config.displayModeBar = modeBar ? "hover" : false;
    fig.config.displaylogo = false;
    fig.config.modeBarButtonsToRemove = MODE_BAR_DROPPED;
    if (isDark()) darken(fig);
    return fig;
  }

  /* A pinned title of several lines that plotly draws partly above the figure moves down into it. */
  function clearTitle(div) {
    var title = div.querySelector(".gtitle");
    var layout = div.layout;
    if (!title || !layout.title || layout.title.yref !== "container") return Promise.resolve();
    var above = TITLE_TOP_PX - (title.getBoundingClientRect().top - div.getBoundingClientRect().top);
    if (above <= 0) return Promise.resolve();
    return window.Plotly.relayout(div, { "title.y": (layout.title.y === undefined ? 1 : layout.title.y) - above / layout.height });
  }

  /* A slider drawn under the plot moves down until the x-axis title above it is clear of it. */
  function clearSlider(div) {
    var slider = div.querySelector("g.slider-container");
    var titles = div.querySelectorAll(".xtitle");
    if (!slider || !titles.length || !(div.layout.sliders || []).length) return Promise.resolve();
    var bottom = Math.max.apply(null, Array.prototype.map.call(titles, function (t) { return t.getBoundingClientRect().bottom; }));
    var overlap = bottom + 6 - slider.getBoundingClientRect().top;
    if (overlap <= 0) return Promise.resolve();
    var pad = (div.layout.sliders[0].pad || {}).t || 0;
    var changes = { "sliders[0].pad.t": pad + overlap, height: div.layout.height + overlap, "margin.b": div.layout.margin.b + overlap };
    div.style.height = div.layout.height + overlap + "px";
    return window.Plotly.relayout(div, changes);
  }

  /* Log axes that span a power of ten or more label powers of ten only, not the 2 and 5 between
   * them plotly picks (its "D1"/"D2" ticks), one label per LOG_TICK_PX of axis at most. */
  function fitLogAxes(div) {
    var changes = {};
    ["x", "y"].forEach(function (letter) {
      axisKeys(div._fullLayout, letter).forEach(function (key) {
        var axis = div._fullLayout[key];
        var span = Math.abs(axis.range[1] - axis.range[0]);
        if (axis.type === "log" && String(axis.dtick).charAt(0) === "D" && span >= 1) {
          changes[key + ".dtick"] = Math.max(1, Math.ceil(span / Math.max(2, axis._length / LOG_TICK_PX)));
        }
      });
    });
    return Object.keys(changes).length ? window.Plotly.relayout(div, changes) : Promise.resolve();
  }

  /* Heatmap values are written only where a cell holds them at MIN_TEXT_PX or more. */
  function fitHeatmapText(div) {
    var layout = div._fullLayout;
    var changes = { texttemplate: [], "textfont.size": [] };
    var indices = [];
    div.data.forEach(function (trace, i) {
      var full = div._fullData[i];
      if (!full || full.type !== "heatmap" || !trace.texttemplate) return;
      var xa = layout[full.xaxis.replace("x", "xaxis")];
      var ya = layout[full.yaxis.replace("y", "yaxis")];
      var z = full.z || [];
      var columns = (z[0] || []).length || 1;
      var cellWidth = xa._length / columns;
      var cellHeight = ya._length / (z.length || 1);
      var decimals = /:\.(\d)f/.exec(trace.texttemplate);
      var longest = 0;
      Array.prototype.forEach.call(z, function (row) {
        Array.prototype.forEach.call(row || [], function (value) {
          var shown = decimals ? Number(value).toFixed(Number(decimals[1])) : String(value);
          if (value !== null && !isNaN(value)) longest = Math.max(longest, shown.length);
        });
      });
      Array.prototype.forEach.call(full.text || [], function (row) {
        Array.prototype.forEach.call(row || [], function (value) { longest = Math.max(longest, String(value || "").length); });
      });
      var size = Math.min(12, Math.floor(cellHeight * 0.7), Math.floor((cellWidth - 4) / (0.62 * Math.max(longest, 3))));
      indices.push(i);
      if (size >= MIN_TEXT_PX) {
        changes.texttemplate.push(trace.texttemplate);
        changes["textfont.size"].push(size);
      } else {
        div.dataset.droppedText = "true";
        changes.texttemplate.push("");
        changes["textfont.size"].push(MIN_TEXT_PX);
      }
    });
    if (indices.length) return window.Plotly.restyle(div, changes, indices);
    return Promise.resolve();
  }

  function overlaps(a, b) {
    return a.left < b.right + LABEL_GAP_PX && b.left < a.right + LABEL_GAP_PX &&
      a.top < b.bottom + LABEL_GAP_PX && b.top < a.bottom + LABEL_GAP_PX;
  }

  /* Point labels (scatter text) that would overlap another label, or leave the figure, are
   * dropped, first come first kept; every point keeps its label on hover (hovertext). */
  function fitPointLabels(div) {
    var frame = div.getBoundingClientRect();
    var kept = [];
    var changes = { text: [], hovertext: [] };
    var indices = [];
    div.data.forEach(function (trace, i) {
      var full = div._fullData[i];
      if (!full || full.type !== "scatter" || !/text/.test(full.mode || "") || !Array.isArray(trace.text)) return;
      var labels = trace.hovertext && trace.hovertext.length ? trace.hovertext : trace.text;
      var nodes = div.querySelectorAll(".scatterlayer .trace")[full.index];
      var texts = nodes ? nodes.querySelectorAll("g.textpoint text") : [];
      if (texts.length !== labels.length) return;
      var shown = labels.map(function (label, j) {
        var box = texts[j].getBoundingClientRect();
        var inside = box.left >= frame.left && box.right <= frame.right;
        if (!label || !inside || kept.some(function (other) { return overlaps(box, other); })) return "";
        kept.push(box);
        return label;
      });
      if (shown.join("\u0001") === trace.text.join("\u0001")) return;
      div.dataset.droppedLabels = "true";
      indices.push(i);
      changes.text.push(shown);
      changes.hovertext.push(labels.slice());
    });
    if (indices.length) return window.Plotly.restyle(div, changes, indices);
    return Promise.resolve();
  }

  var figures = [];

  /* The width a box gives its contents: its client width less its padding (a theme may pad it). */
  function contentWidth(box) {
    var style = getComputedStyle(box);
    return box.clientWidth - (parseFloat(style.paddingLeft) || 0) - (parseFloat(style.paddingRight) || 0);
  }

  function draw(figure) {
    var box = figure.div.parentElement;
    var boxWidth = (box && contentWidth(box)) || document.documentElement.clientWidth;
    var width = drawingWidth(figure.spec, boxWidth);
    figure.width = boxWidth;
    figure.dark = isDark();
    var fig = fit(figure.spec, width);
    figure.titleRoom = fig.titleRoom;
    figure.div.style.height = fig.layout.height + "px";
    figure.div.style.width = width > boxWidth ? width + "px" : "100%";
    figure.div.dataset.fittedWidth = String(Math.round(width)); // the site's figure check compares the drawing
    if (box) {
      // a figure wider than its box scrolls sideways inside it: a keyboard reader must reach it too
      var scrolls = width > boxWidth;
      box.classList.toggle("course-figure-scrolls", scrolls);
      if (scrolls) {
        box.tabIndex = 0;
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", "Scrollable figure: " + (figure.div.getAttribute("aria-label") || "figure"));
      } else if (box.hasAttribute("tabindex")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    }
    return window.Plotly.react(figure.div, fig.data, fig.layout, fig.config).then(function () {
      if (!figure.listening) {
        figure.listening = true;
        // after the change is applied: plotly_sliderchange comes a frame before its step's command
        figure.div.on("plotly_relayout", function (change) { if (setsTitle(change)) rewrapTitle(figure); });
        figure.div.on("plotly_update", function (change) { if (setsTitle(change && change.layout)) rewrapTitle(figure); });
        figure.div.on("plotly_animated", function () { rewrapTitle(figure); });
      }
      return fitLogAxes(figure.div)
        .then(function () { return fitHeatmapText(figure.div); })
        .then(function () { return fitPointLabels(figure.div); })
        .then(function () { return clearSlider(figure.div); })
        .then(function () { return clearTitle(figure.div); });
    });
  }

  function nextTask() {
    return new Promise(function (resolve) { setTimeout(resolve, 0); });
  }

  function drawAll() {
    var chain = Promise.resolve();
    figures.forEach(function (figure) {
      chain = chain.then(nextTask).then(function () { return draw(figure); });
    });
    return chain;
  }

  function start() {
    document.querySelectorAll("script.course-figure-spec").forEach(function (script) {
      var div = document.getElementById(script.dataset.figure);
      if (div) figures.push({ div: div, spec: JSON.parse(script.textContent) });
    });
    var ready = drawAll().then(function () {
      document.documentElement.dataset.figuresDrawn = String(figures.length);
      document.documentElement.dataset.figuresTheme = isDark() ? "dark" : "light";
    });
    window.courseFigures = { ready: ready, fit: fit, wrap: wrap };
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        figures.forEach(function (figure) {
          var box = figure.div.parentElement;
          if (box && Math.abs(contentWidth(box) - figure.width) > 40) draw(figure);
        });
      }, 200);
    });
    // A change of theme redraws the figures in its colours; data-figures-theme says, once they all
    // are, which theme they are drawn in (the site tests wait on it after switching the theme).
    var switches = 0;
    new MutationObserver(function () {
      var mine = ++switches;
      var redrawn = figures.filter(function (figure) { return figure.dark !== isDark(); }).map(draw);
      Promise.all(redrawn).then(function () {
        if (mine === switches) document.documentElement.dataset.figuresTheme = isDark() ? "dark" : "light";
      });
    }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  }

  /* Whether a relayout's changes (plotly_relayout's event, plotly_update's layout) set the title. */
  function setsTitle(change) {
    return Boolean(change) && Object.keys(change).some(function (key) { return /^title(\.text)?$/.test(key); });
  }

  /* A title set after the figure was drawn: wrapped, if a command fitTitle did not see set it (a
   * frame of an animation, a script's relayout), and moved down into the figure if its lines
   * start above it (clearTitle). Wrapping a wrapped title changes nothing, so the relayout this
   * makes, which comes back here, makes no other; clearTitle's sets title.y, not the title. */
  function rewrapTitle(figure) {
    var layout = figure.div.layout;
    var text = titleText(layout);
    if (!text) return;
    var size = (layout.title && layout.title.font && layout.title.font.size) || 17;
    var wrapped = wrap(text, figure.titleRoom, size).join("<br>");
    if (wrapped !== text) window.Plotly.relayout(figure.div, { "title.text": wrapped });
    else clearTitle(figure.div);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
