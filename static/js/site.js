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
})();
