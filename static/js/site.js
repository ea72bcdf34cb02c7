// Every page: the behaviour of the nav and of forms, from a file rather than inline handlers, which the
// Content-Security-Policy refuses. Delegated from the document, so that content swapped in later (the
// results page replaces its main part when scoring ends) behaves the same.
(function () {
  "use strict";

  // The language menu switches at once; without JavaScript its form has a button instead.
  document.addEventListener("change", function (event) {
    if (event.target.id === "language") event.target.form.submit();
  });

  // A form with data-confirm asks before it posts what cannot be undone (withdrawing a submission,
  // answering an erratum, disabling an account).
  document.addEventListener("submit", function (event) {
    var message = event.target.dataset.confirm;
    if (message && !window.confirm(message)) event.preventDefault();
  });

  // A form sent back with errors opens on their summary (templates/accounts/_form.html), so that a keyboard
  // or a screen reader starts from the list of what to fix rather than from the top of the page.
  var summary = document.querySelector(".error-summary");
  if (summary) summary.focus();

  // A link of the summary puts the focus in its field, where following a fragment only scrolls.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(".error-summary a[href^='#']");
    var field = link && document.getElementById(link.hash.slice(1));
    if (field) {
      event.preventDefault();
      field.focus();
    }
  });

  // A copy button (templates/site/_copy.html) copies its value whole, even where the screen shows it cut
  // short. Where the clipboard is refused (a page not served over HTTPS, a permission denied), it selects the
  // value instead, for the reader to copy. The class shows the buttons, which do nothing without this script.
  document.documentElement.classList.add("js");
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.copy");
    var source = button && document.getElementById(button.dataset.copy);
    if (!source) return;
    var status = button.nextElementSibling;
    function tell(message) {
      status.textContent = message;
      window.clearTimeout(button.copyTimer);
      button.copyTimer = window.setTimeout(function () { status.textContent = ""; }, 5000);
    }
    function select() {
      window.getSelection().selectAllChildren(source);
      tell(button.dataset.selected);
    }
    if (!navigator.clipboard) return select();
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      tell(button.dataset.copied);
    }, select);
  });
})();
