/* Where a figure's drawing goes wrong, as a reader sees it (issue 59): run by tests/site/phone.py in
 * the page loads the site tests already make, on every drawn figure of the page, as drawn and after
 * every step of its sliders and menus.
 *
 * Returns a list of {figure, state, kind, what}; kind is one of KINDS:
 * - "text meets text": two texts of a figure (title, axis titles, tick labels, labels, heatmap
 *   values, legend, slider and menu labels) overlap;
 * - "text on a line": an arrow, a line or arc (a shape or a trace's line), a box's edge or a marker
 *   runs through a text (unless the text stands on an opaque box drawn over it, which hides the line);
 * - "arrowhead in a box": an arrow's head ends inside a box (under it, or on its text);
 * - "text cut": a text runs past its figure's edges;
 * - "wider than its box": the figure is drawn wider than the page gives it (it scrolls sideways);
 * - "fitted to another width": course-figures.js fitted the figure (wrapped its titles, dropped
 *   labels) for one width and plotly drew it at another (a box's padding it did not count);
 * - "title leaves the figure": as drawn or after a slider or menu step, the title is not inside
 *   the figure, above its plot.
 * Texts are compared by their glyphs' band (a text's box less the room above capitals and below
 * the baseline), as rotated quadrilaterals: a line that only grazes a label's line spacing is not
 * counted. Every drawn state of an explorer is checked; a problem found in several states is
 * reported once, with the first state it was seen in.
 */
async ({ steps }) => {
  const GLYPH_TOP = 0.22; // of a line's height: above the capitals
  const GLYPH_BOTTOM = 0.18; // below the baseline (descenders are few)
  const SIDE_PX = 1; // a text's box is trimmed by this on its left and right
  const SAMPLE_PX = 2; // a line is sampled every SAMPLE_PX along its length
  const INSIDE_PX = 3; // an arrowhead this far inside a box is in it
  const CUT_PX = 1; // a text this far past its figure's edge is cut
  const MOST_STEPS = 12; // a slider of more steps is checked at this many, spread, and its longest title's
  const KINDS = ["text meets text", "text on a line", "arrowhead in a box", "text cut", "wider than its box",
                 "fitted to another width", "title leaves the figure"];

  const settle = () => new Promise(resolve => {
    let frames = 0;
    const next = () => (++frames < 4 ? requestAnimationFrame(next) : setTimeout(resolve, 60));
    requestAnimationFrame(next);
  });

  const visible = el => {
    for (let node = el; node && node.nodeType === 1; node = node.parentNode) {
      const style = getComputedStyle(node);
      if (style.display === "none" || style.visibility === "hidden" || Number(style.opacity) === 0) return false;
    }
    return true;
  };

  // An element's local box mapped to the screen: four corners (a rotated text stays a quadrilateral).
  const quad = (el, box, trim) => {
    const m = el.getScreenCTM();
    if (!m) return null;
    const t = trim || { left: 0, right: 0, top: 0, bottom: 0 };
    const x0 = box.x + t.left, x1 = box.x + box.width - t.right, y0 = box.y + t.top, y1 = box.y + box.height - t.bottom;
    if (x1 <= x0 || y1 <= y0) return null;
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
  };

  const textQuad = el => {
    let box;
    try { box = el.getBBox(); } catch (e) { return null; }
    if (!box || box.width === 0 || box.height === 0) return null;
    const lines = Math.max(1, el.querySelectorAll("tspan.line").length);
    const line = box.height / lines;
    return quad(el, box, { left: SIDE_PX, right: SIDE_PX, top: GLYPH_TOP * line, bottom: GLYPH_BOTTOM * line });
  };

  // Separating axes: two convex quadrilaterals overlap when no edge's normal separates them.
  const project = (poly, [ax, ay]) => {
    let lo = Infinity, hi = -Infinity;
    poly.forEach(([x, y]) => { const v = x * ax + y * ay; lo = Math.min(lo, v); hi = Math.max(hi, v); });
    return [lo, hi];
  };
  const meet = (a, b) => [a, b].every(poly => poly.every((p, i) => {
    const q = poly[(i + 1) % poly.length];
    const axis = [q[1] - p[1], p[0] - q[0]];
    const [a0, a1] = project(a, axis), [b0, b1] = project(b, axis);
    return a0 < b1 && b0 < a1;
  }));
  const inside = (poly, [x, y], margin) => {
    // convex, corners in order: inside when on the same side of every edge, margin px in
    let sign = 0;
    for (let i = 0; i < poly.length; i++) {
      const [x0, y0] = poly[i], [x1, y1] = poly[(i + 1) % poly.length];
      const len = Math.hypot(x1 - x0, y1 - y0) || 1;
      const cross = ((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)) / len;
      if (Math.abs(cross) < margin) return false;
      const s = Math.sign(cross);
      if (sign && s !== sign) return false;
      sign = s;
    }
    return true;
  };
  const bounds = poly => ({
    left: Math.min(...poly.map(p => p[0])), right: Math.max(...poly.map(p => p[0])),
    top: Math.min(...poly.map(p => p[1])), bottom: Math.max(...poly.map(p => p[1])),
  });

  // Points along a path, on the screen.
  const samples = path => {
    let length;
    try { length = path.getTotalLength(); } catch (e) { return []; }
    const m = path.getScreenCTM();
    if (!m || !(length > 0)) return [];
    const n = Math.min(4000, Math.ceil(length / SAMPLE_PX));
    const points = [];
    for (let i = 0; i <= n; i++) {
      const p = path.getPointAtLength((length * i) / n);
      points.push([m.a * p.x + m.c * p.y + m.e, m.b * p.x + m.d * p.y + m.f]);
    }
    return points;
  };

  const paint = (el, what) => {
    const style = getComputedStyle(el);
    const color = style[what];
    if (!color || color === "none" || /rgba\([^)]*,\s*0(\.0+)?\)$/.test(color)) return false;
    const opacity = Number(style[what + "Opacity"] === undefined ? 1 : style[what + "Opacity"]);
    if (what === "stroke" && parseFloat(style.strokeWidth) === 0) return false;
    return opacity > 0.25;
  };

  const label = el => (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);

  // What a figure draws, as the check sees it.
  function parts(div) {
    const texts = [];
    div.querySelectorAll("svg text").forEach(el => {
      if (!label(el) || el.closest(".hoverlayer") || !visible(el)) return;
      const poly = textQuad(el);
      if (!poly) return;
      const note = el.closest("g.annotation");
      const owner = note || el.closest("g.textpoint, g.legend, g.slider-container, g.updatemenu-container") || el;
      // a text on an opaque box of its own (a diagram's box, a menu button) hides what runs under it
      const bg = note && note.querySelector("rect.bg");
      const opaque = Boolean(bg && paint(bg, "fill"));
      const kind = note ? "label" : el.classList.contains("gtitle") ? "title"
        : el.closest(".xtick, .ytick") || el.closest(".xaxislayer-above, .yaxislayer-above") ? "tick label"
        : /^[xy]\d*title$/.test(el.getAttribute("class") || "") ? "axis title"
        : el.closest("g.legend") ? "legend" : el.closest("g.slider-container") ? "slider"
        : el.closest("g.updatemenu-container") ? "menu" : el.closest(".heatmaplayer") ? "value" : "label";
      texts.push({ el, poly, owner, note, opaque, kind, text: label(el) });
    });
    const lines = [];
    const addLine = (el, name, owner) => {
      if (!visible(el) || !paint(el, "stroke")) return;
      const points = samples(el);
      if (points.length) lines.push({ el, name, owner, points });
    };
    div.querySelectorAll("g.annotation-arrow-g path").forEach(el => addLine(el, "an arrow", el.closest("g.annotation") || el));
    div.querySelectorAll(".shapelayer path").forEach(el => addLine(el, "a shape's line", el));
    div.querySelectorAll(".scatterlayer path.js-line").forEach(el => addLine(el, "a line", el.closest("g.trace") || el));
    const boxes = [];
    div.querySelectorAll("g.annotation rect.bg").forEach(el => {
      const note = el.closest("g.annotation");
      if (!visible(el) || !label(note)) return;
      const poly = quad(el, el.getBBox());
      if (!poly) return;
      if (paint(el, "stroke")) {  // a box's edge, as a line
        const [a, b, c, d] = poly;
        const points = [];
        [[a, b], [b, c], [c, d], [d, a]].forEach(([p, q]) => {
          const n = Math.ceil(Math.hypot(q[0] - p[0], q[1] - p[1]) / SAMPLE_PX);
          for (let i = 0; i <= n; i++) points.push([p[0] + ((q[0] - p[0]) * i) / n, p[1] + ((q[1] - p[1]) * i) / n]);
        });
        lines.push({ el, name: "a box's edge", owner: note, points });
      }
      if (paint(el, "fill") || paint(el, "stroke")) boxes.push({ el, poly, owner: note, opaque: paint(el, "fill"), name: 'the box "' + label(note) + '"' });
    });
    div.querySelectorAll(".shapelayer path").forEach(el => {
      if (!visible(el) || !paint(el, "fill")) return;
      let box;
      try { box = el.getBBox(); } catch (e) { return; }
      const poly = box.width > 2 && box.height > 2 ? quad(el, box) : null;
      if (poly) boxes.push({ el, poly, owner: el, opaque: true, name: "a filled shape" });
    });
    const marks = [];
    div.querySelectorAll(".scatterlayer g.trace").forEach(trace => {
      const points = [...trace.querySelectorAll("g.points path.point")];
      const labels = [...trace.querySelectorAll("g.textpoint")];
      points.forEach((el, i) => {
        if (!visible(el)) return;
        let box;
        try { box = el.getBBox(); } catch (e) { return; }
        if (box.width < 3 || box.height < 3) return;
        // a marker's own label (same trace, same point) is written on it or beside it by design
        const poly = quad(el, box, { left: 1, right: 1, top: 1, bottom: 1 });
        if (poly) marks.push({ el, poly, own: labels.length === points.length ? labels[i] : null });
      });
    });
    // each subplot's plot area: an axis's labels and titles stay out of the other panels' areas
    const areas = [];
    const full = div._fullLayout || {};
    Object.keys(full._plots || {}).forEach(id => {
      const plot = full._plots[id];
      const xa = plot.xaxis, ya = plot.yaxis;
      if (!xa || !ya || xa.visible === false || ya.visible === false) return;
      const frame = (div.querySelector("svg.main-svg") || div).getBoundingClientRect();
      const l = frame.left + xa._offset, t = frame.top + ya._offset;
      areas.push({ id, poly: [[l, t], [l + xa._length, t], [l + xa._length, t + ya._length], [l, t + ya._length]] });
    });
    return { texts, lines, boxes, marks, areas };
  }

  // a is drawn after (over) b
  const later = (a, b) => Boolean(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_PRECEDING);

  function problemsOf(div, state) {
    const found = [];
    const add = (kind, what) => found.push({ figure: div.id, index: indexOf(div), state, kind, what });
    const { texts, lines, boxes, marks, areas } = parts(div);
    const svg = div.querySelector("svg.main-svg");
    const frame = svg ? svg.getBoundingClientRect() : div.getBoundingClientRect();
    // text meets text
    texts.forEach((a, i) => texts.slice(i + 1).forEach(b => {
      if (a.owner === b.owner) return;
      if (a.kind === "slider" && b.kind === "slider") return; // plotly spaces its own step labels
      if (meet(a.poly, b.poly)) add("text meets text", `${a.kind} "${a.text}" meets ${b.kind} "${b.text}"`);
    }));
    // text on a line, an arc, an arrow or a box's edge
    texts.forEach(t => {
      lines.forEach(line => {
        if (line.owner === t.owner || (t.note && line.owner === t.note)) return;
        if (t.opaque && later(t.note, line.el)) return; // the text's box is drawn over the line
        if (t.kind === "tick label" || t.kind === "axis title") {
          // a trace or shape clipped to the plot area cannot reach the axes' labels; an arrow can
          if (line.name !== "an arrow" && line.name !== "a box's edge") return;
        }
        // an opaque box drawn over the line, under the text, hides the line there (a "+" on a node)
        const c = t.poly.reduce((m, p) => [m[0] + p[0] / 4, m[1] + p[1] / 4], [0, 0]);
        if (boxes.some(b => b.opaque && b.owner !== line.owner && later(b.el, line.el) && inside(b.poly, c, 0))) return;
        const hit = line.points.find(p => inside(t.poly, p, 0));
        if (hit) add("text on a line", `${line.name} runs through ${t.kind} "${t.text}"`);
      });
      marks.forEach(mark => {
        if (mark.own && t.owner === mark.own) return;
        if (t.kind === "legend" || t.kind === "tick label" || t.kind === "axis title") return;
        if (meet(t.poly, mark.poly)) add("text on a line", `a marker lies on ${t.kind} "${t.text}"`);
      });
    });
    // an axis's labels and titles inside another panel's plot area
    texts.filter(t => t.kind === "tick label" || t.kind === "axis title").forEach(t => {
      areas.forEach(area => {
        const shrunk = area.poly.map(([x, y], i) => [x + (i === 0 || i === 3 ? 2 : -2), y + (i < 2 ? 2 : -2)]);
        if (meet(t.poly, shrunk)) add("text meets text", `${t.kind} "${t.text}" lies on the plot area of panel ${area.id}`);
      });
    });
    // arrowheads in boxes
    lines.filter(line => line.name === "an arrow").forEach(line => {
      const tip = line.points[line.points.length - 1];
      const head = line.owner;
      boxes.forEach(box => {
        if (box.owner === head) return;
        if (inside(box.poly, tip, INSIDE_PX)) {
          const under = later(box.el, line.el) ? "under" : "on";
          add("arrowhead in a box", `an arrow's head ends ${under} ${box.name}`);
        }
      });
    });
    // text cut by the figure's edges (the title's own kind below)
    texts.filter(t => t.kind !== "title").forEach(t => {
      const b = bounds(t.poly);
      if (b.left < frame.left - CUT_PX || b.right > frame.right + CUT_PX || b.top < frame.top - CUT_PX || b.bottom > frame.bottom + CUT_PX) {
        add("text cut", `${t.kind} "${t.text}" runs past the figure's edge`);
      }
    });
    // wider than the box the page gives it
    const box = div.parentElement;
    if (box) {
      const style = getComputedStyle(box);
      const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const drawn = div.getBoundingClientRect().width;
      if (drawn > room + 1) add("wider than its box", `drawn ${Math.round(drawn)} px wide in a ${Math.round(room)} px box`);
    }
    const fitted = Number(div.dataset.fittedWidth);
    const svgWidth = svg ? svg.getBoundingClientRect().width : 0;
    if (fitted && svg && Math.abs(svgWidth - fitted) > 1) {
      add("fitted to another width", `fitted for ${fitted} px, drawn ${Math.round(svgWidth)} px wide`);
    }
    return found;
  }

  function titleProblem(div, state) {
    const title = div.querySelector(".gtitle");
    if (!title || !label(title)) return null;
    const f = div.getBoundingClientRect();
    const glyphs = textQuad(title);  // its glyphs, as every text is compared
    if (!glyphs) return null;
    const t = bounds(glyphs);
    const plotTop = f.top + ((div._fullLayout || {})._size || {}).t;
    if (t.left < f.left - CUT_PX || t.right > f.right + CUT_PX || t.top < f.top - CUT_PX || t.bottom > plotTop + CUT_PX) {
      return { figure: div.id, index: indexOf(div), state, kind: "title leaves the figure",
               what: `the title "${label(title)}" spans ${Math.round(t.left - f.left)}..${Math.round(t.right - f.left)} px of ${Math.round(f.width)}, ${Math.round(t.top - f.top)}..${Math.round(t.bottom - f.top)} px from the top (the plot starts at ${Math.round(plotTop - f.top)})` };
    }
    return null;
  }

  // Each step of each slider and menu, as the control applies it (its method and args), then back.
  function controls(div) {
    const found = [];
    const layout = div.layout || {};
    (layout.sliders || []).forEach((slider, s) => (slider.steps || []).forEach((step, k) =>
      found.push({ name: `slider step "${step.label === undefined ? k : step.label}"`, command: step, active: [`sliders[${s}].active`, k], first: slider.active || 0, index: k })));
    (layout.updatemenus || []).forEach((menu, s) => (menu.buttons || []).forEach((button, k) =>
      found.push({ name: `menu "${button.label === undefined ? k : button.label}"`, command: button, active: [`updatemenus[${s}].active`, k], first: menu.active || 0, index: k })));
    return found;
  }

  async function apply(div, command, active) {
    const method = command.method || "restyle";
    if (method === "skip") return;
    const args = command.args || [];
    if (method === "animate") await Plotly.animate(div, ...args);
    else await Plotly[method](div, ...args);
    await Plotly.relayout(div, { [active[0]]: active[1] });
    await settle();
  }

  const all = [...document.querySelectorAll("div.plotly-graph-div")];
  function indexOf(div) { return all.indexOf(div) + 1; } // the figure's number on its page (fNN)
  const seen = new Set();
  const problems = [];
  const keep = p => {
    const key = `${p.figure}|${p.kind}|${p.what}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push(p);
  };
  const divs = [...document.querySelectorAll("div.plotly-graph-div")].filter(div => div.querySelector("svg.main-svg") && visible(div));
  for (const div of divs) {
    problemsOf(div, "as drawn").forEach(keep);
    const title = titleProblem(div, "as drawn");
    if (title) keep(title);
    if (!steps) continue;
    // each control's steps in order from the one it opened on, then back to that one
    const list = controls(div);
    const groups = [...new Set(list.map(c => c.active[0]))];
    for (const group of groups) {
      let mine = list.filter(c => c.active[0] === group);
      if (mine.length > MOST_STEPS) {
        // a long slider: MOST_STEPS steps spread over it, and the step with the longest title
        const titleOf = c => {
          const args = c.command.args || [];
          const change = (c.command.method === "relayout" ? args[0] : args[1]) || {};
          const title = change["title.text"] !== undefined ? change["title.text"] : change.title;
          return String(title && typeof title === "object" ? title.text || "" : title || "").length;
        };
        const longest = mine.reduce((a, b) => (titleOf(b) > titleOf(a) ? b : a));
        const picked = new Set([...Array(MOST_STEPS).keys()].map(i => Math.round((i * (mine.length - 1)) / (MOST_STEPS - 1))));
        mine = mine.filter((c, i) => picked.has(i) || c === longest || c.index === c.first);
      }
      const first = mine.find(c => c.index === c.first);
      for (const control of mine) {
        if (control.index === control.first) continue;
        try {
          await apply(div, control.command, control.active);
        } catch (e) {
          keep({ figure: div.id, index: indexOf(div), state: control.name, kind: "title leaves the figure", what: `the step failed: ${e}` });
          continue;
        }
        const title = titleProblem(div, control.name);
        if (title) keep(title);
        problemsOf(div, control.name).forEach(keep);
      }
      if (first) await apply(div, first.command, first.active);
    }
  }
  problems.forEach(p => { if (!KINDS.includes(p.kind)) throw new Error("unknown kind " + p.kind); });
  return problems;
}
