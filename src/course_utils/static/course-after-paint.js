/* Loads the page's two heavy scripts after its first paint, so that a slow phone shows the text first.
 *
 * plotly.js (1.5 MB, on the pages that hold a figure) followed by course-figures.js, which draws the
 * figures, and the theme's fontawesome.js (1.5 MB, which redraws the icons its stylesheet's web font
 * already shows as SVG) are written into the page as <script type="text/x-course-after-paint"
 * data-src="...">, a data block that a browser neither fetches nor runs (course_utils.book). This
 * script, loaded async, adds them as scripts, in page order, once the first contentful paint is
 * recorded: loaded deferred instead, they were fetched, compiled and run before that paint, and
 * delayed it (the welcome page with the CPU slowed 4x: a median of 1.58 s deferred, 1.25 s after the
 * paint, eleven visits each). Fetched early (preloaded) and run after the paint, they still delayed
 * it on a 2-core machine. Where the browser does not report paints, two frames after this script
 * runs; in a tab that draws no frames (hidden), at the page's load event.
 */
(function () {
  "use strict";

  var TYPE = "text/x-course-after-paint";
  var started = false;

  function loadScripts() {
    if (started) return;
    started = true;
    document.querySelectorAll('script[type="' + TYPE + '"]').forEach(function (placeholder) {
      var script = document.createElement("script");
      script.src = placeholder.dataset.src;
      script.async = false; // scripts added by a script run in the order they were added
      document.head.appendChild(script);
    });
  }

  function painted() {
    return performance.getEntriesByName("first-contentful-paint").length > 0;
  }

  var timed = ((window.PerformanceObserver && PerformanceObserver.supportedEntryTypes) || []).indexOf("paint") >= 0;
  (function waitForThePaint(frames) {
    // a frame is checked for the paint before the next, as a paint observer's report can wait
    // behind the page's long tasks (MathJax typesetting a lesson's formulas) for a second or more
    if (timed ? painted() : frames >= 2) setTimeout(loadScripts, 0);
    else requestAnimationFrame(function () { waitForThePaint(frames + 1); });
  })(0);
  window.addEventListener("load", loadScripts);
})();
