/* A one-time launch address (/launch/CODE) hands the page its token in the body, never in a
 * URL: keep it in this tab's sessionStorage (as the page does with ?token=) and go to the page. */
(function () {
  "use strict";
  const meta = document.querySelector('meta[name="lingxi-token"]');
  try { if (meta) sessionStorage.setItem("lingxi-token", meta.getAttribute("content")); }
  catch (err) { /* storage off: the printed URL still works */ }
  location.replace("/");
})();
