/* The site search, tuned for a course: the lesson that teaches a term ranks first, and result
 * snippets show the lesson's prose, not navigation, code or raw LaTeX.
 *
 * Loaded on search.html before Sphinx's searchtools.js, which keeps a Scorer defined before it.
 * COURSE_TEACHES (written by course_utils.book) maps each glossary term, in lower case, to the
 * lesson that uses it most.
 */
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
  TEACHER_BOOST: 1000, // above any score Sphinx gives (an exact index entry scores 100)
  score: function (result) {
    var docname = result[0];
    var score = result[4];
    var query = (new URLSearchParams(window.location.search).get("q") || "").toLowerCase().trim();
    var teaches = window.COURSE_TEACHES || {};
    return teaches[query] === docname ? score + Scorer.TEACHER_BOOST : score;
  },
};

document.addEventListener("DOMContentLoaded", function () {
  if (typeof Search === "undefined") return;
  var NOT_PROSE = [".headerlink", "script", "style", ".math", "mjx-container", "nav", ".prev-next-area",
    ".bd-header-article", ".header-article-items", ".cell_input", "button", ".toggle-details",
    ".admonition-title", ".bd-sidebar-secondary", "#searchbox", ".plotly-graph-div",
    ".onlyprint"]; // the print-only title and table of contents ("Contents 1. ...")
  Search.htmlToText = function (htmlString, anchor) {
    var page = new DOMParser().parseFromString(htmlString, "text/html");
    NOT_PROSE.forEach(function (selector) {
      page.querySelectorAll(selector).forEach(function (element) { element.remove(); });
    });
    var main = page.querySelector('[role="main"]');
    var block = (anchor && main && main.querySelector(anchor)) || main;
    return block ? block.textContent.replace(/\s+/g, " ") : "";
  };
});
