/* The theme's controls, made to work for every reader: each fix does nothing once the theme does
 * the right thing itself, so that upgrading the theme never makes a control act twice.
 *
 * 1. The sidebar toggles on a phone or a tablet. pydata-sphinx-theme 0.17 opens its sidebar dialogs
 *    from document.querySelector(".primary-toggle") and (".secondary-toggle"): the first such button
 *    in the page, its own navbar's, which sphinx-book-theme 1.3 hides; sphinx-book-theme binds its
 *    desktop "hide the sidebar" to the same hidden button. The toggles a reader sees, in the
 *    article's header, then do nothing (the site navigation below 992 px, the page's contents below
 *    1200 px). A click on a visible toggle that changed nothing (no dialog opened, no sidebar
 *    hidden or shown) is handed to the button the theme listens on. The check runs after the click
 *    has reached every listener, so a theme that handles the visible toggle itself is left alone.
 * 2. A section link tapped in the page's contents scrolls the page under the open dialog, which
 *    pydata-sphinx-theme 0.17 leaves open: the reader lands on the section and sees the dialog.
 *    A dialog still open after a tap on a link to this page is closed (the theme then puts the
 *    sidebar back and returns the focus to the toggle).
 *    The toggle's tooltip, which Bootstrap shows when the focus comes back to the toggle, is not
 *    shown: on a phone it would sit over the download button and take the next tap.
 * 3. The colour-mode button's icons are images named "Light", "Dark", "System Settings" inside a
 *    button named "Color mode": its accessible name lacks the label it shows (WCAG 2.5.3). The
 *    icons are marked decorative; the button's name says the current mode.
 * 4. The table of contents opens a lesson's sub-pages (its lab page) with a <summary> that holds
 *    only a chevron: a control with no name (axe summary-name, serious). Each such toggle is named
 *    after what it opens: "Pages under <the lesson's title>: <their titles>".
 * 5. The search button shows "Search" and its keyboard shortcut but is named "Search" by an
 *    aria-label: its name lacks part of what it shows (WCAG 2.5.3, axe label-content-name-mismatch).
 *    Its name becomes all the text it holds, "Search Ctrl+K", of which each width shows a part.
 */
(function () {
  "use strict";

  var TOGGLES = [".primary-toggle", ".secondary-toggle"];
  var WATCHED = ["pst-primary-sidebar", "pst-secondary-sidebar", "pst-primary-sidebar-modal", "pst-secondary-sidebar-modal"];

  // What a sidebar toggle can change: the sidebars' classes and whether their dialogs are open.
  function sidebarState() {
    return WATCHED.map(function (id) {
      var element = document.getElementById(id);
      return element ? element.className + (element.open ? " [open]" : "") : "-";
    }).join("|");
  }

  document.addEventListener("click", function (event) {
    if (!event.isTrusted || !(event.target instanceof Element)) return;
    TOGGLES.forEach(function (selector) {
      var toggle = event.target.closest(selector);
      var bound = document.querySelector(selector);
      if (!toggle || !bound || toggle === bound) return;
      var before = sidebarState();
      setTimeout(function () {
        if (sidebarState() === before) bound.click();
      }, 0);
    });
  }, true);

  document.addEventListener("click", function (event) {
    if (!(event.target instanceof Element)) return;
    var link = event.target.closest("dialog[open] a[href]");
    if (!link) return;
    var dialog = link.closest("dialog");
    var target = new URL(link.href, location.href);
    if (target.origin + target.pathname !== location.origin + location.pathname || !target.hash) return;
    setTimeout(function () {
      if (dialog.open) dialog.close();
    }, 0);
  }, true);

  // When a sidebar dialog closes, the theme gives the focus back to the toggle that opened it, and
  // Bootstrap shows the toggle's tooltip on focus: on a phone it stays, over the download button
  // beside it, and takes the next tap. The focus stays; the toggle's tooltip is cancelled
  // (Bootstrap's cancelable show.bs.tooltip) while that returned focus lasts.
  var focusReturning = false;
  function afterDialogCloses() {
    focusReturning = true;
    if (!window.bootstrap || !bootstrap.Tooltip) return;
    document.querySelectorAll(TOGGLES.join(", ")).forEach(function (toggle) {
      var tooltip = bootstrap.Tooltip.getInstance(toggle);
      if (tooltip) tooltip.hide();  // the one the tap that opened the dialog showed
    });
  }
  // It ends when the focus leaves the toggle or a key is pressed, not at the next touch: on a touch
  // screen Bootstrap shows the focused toggle's tooltip during the tap itself (after touchend, before
  // the tap's mouse events move the focus), over the download button, where it takes the tap.
  document.addEventListener("keydown", function () { focusReturning = false; }, true);
  document.addEventListener("focusout", function (event) {
    if (event.target instanceof Element && event.target.closest(TOGGLES.join(", "))) focusReturning = false;
  }, true);
  document.addEventListener("show.bs.tooltip", function (event) {
    if (focusReturning && event.target instanceof Element && event.target.closest(TOGGLES.join(", "))) {
      event.preventDefault();
    }
  }, true);

  function nameTheModeButton() {
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      button.querySelectorAll("svg, i").forEach(function (icon) {
        icon.setAttribute("aria-hidden", "true");
        icon.removeAttribute("aria-labelledby");
        icon.removeAttribute("role");
      });
      var mode = document.documentElement.dataset.mode || "auto";
      var label = { light: "Light", dark: "Dark", auto: "System Settings" }[mode] || mode;
      button.setAttribute("aria-label", "Color mode: " + label);
    });
  }

  function nameTheTocToggles() {
    document.querySelectorAll("nav details > summary").forEach(function (summary) {
      if (summary.textContent.trim() || summary.getAttribute("aria-label")) return;  // named already
      var item = summary.closest("li");
      var link = item && item.querySelector(":scope > a");
      var children = Array.prototype.map.call(summary.parentElement.querySelectorAll(":scope > ul a"), function (a) {
        return a.textContent.trim();
      }).filter(Boolean);
      var owner = link ? link.textContent.trim() : "this entry";
      summary.setAttribute("aria-label", "Pages under " + owner + (children.length ? ": " + children.join(", ") : ""));
    });
  }

  // Named by all the text it holds ("Search Ctrl+K"), which holds whatever part of it a width shows.
  function nameTheSearchButtonByItsText() {
    document.querySelectorAll("button.search-button-field, .search-button__button").forEach(function (button) {
      var text = button.textContent.replace(/\s+/g, " ").trim();
      var label = button.getAttribute("aria-label");
      if (!label || !text || text === label) return;  // an icon alone, or named by its text already
      button.setAttribute("aria-label", text);
      button.querySelectorAll("svg, i").forEach(function (icon) { icon.setAttribute("aria-hidden", "true"); });
    });
  }

  function start() {
    nameTheModeButton();
    nameTheTocToggles();
    nameTheSearchButtonByItsText();
    ["pst-primary-sidebar-modal", "pst-secondary-sidebar-modal"].forEach(function (id) {
      var dialog = document.getElementById(id);
      if (dialog) dialog.addEventListener("close", afterDialogCloses);
    });
    // Font Awesome swaps each <i> for an <svg> when it gets to it; the theme changes the mode.
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      new MutationObserver(nameTheModeButton).observe(button, { childList: true });
    });
    new MutationObserver(nameTheModeButton).observe(document.documentElement, { attributes: true, attributeFilter: ["data-mode"] });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
