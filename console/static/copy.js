// The console's one script, a progressive enhancement: a copy button
// beside each short ID (a <code class="id"> with the whole ID as its
// title). Without it the page is the same, the whole ID on hover and on
// the record's own page. The Content-Security-Policy allows this file by
// its hash, nothing else.
(function () {
  "use strict";
  var ids = document.querySelectorAll("main code.id[title]");
  if (!ids.length) return;
  // One live region says what a button did, for screen readers.
  var status = document.createElement("p");
  status.className = "vh";
  status.id = "copy-status";
  status.setAttribute("role", "status");
  document.body.appendChild(status);
  var said = 0;
  function say(text) {
    // A different text each time, so that the same news is read again.
    status.textContent = text + (said++ % 2 ? "" : "\u00a0");
  }
  // Where the clipboard API is missing (a page over plain HTTP from
  // another host), a selected, hidden text area and the copy command.
  function fallback(id) {
    var area = document.createElement("textarea");
    area.value = id;
    area.className = "vh";
    area.setAttribute("readonly", "");
    area.setAttribute("aria-hidden", "true");
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e) {}
    area.remove();
    return ok;
  }
  ids.forEach(function (code) {
    var id = code.title;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy " + id);
    button.dataset.id = id;
    button.addEventListener("click", function () {
      function done(ok) {
        button.focus();
        button.classList.toggle("done", ok);
        say(ok ? "Copied" : "Could not copy: select the ID on its own page instead");
      }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(id).then(function () { done(true); }, function () { done(fallback(id)); });
      } else {
        done(fallback(id));
      }
    });
    // Never inside a link: beside it.
    (code.closest("a, button, summary") || code).after(button);
  });
})();
