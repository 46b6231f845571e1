// The little JavaScript the page uses; everything works without it.
// Changing the "as of" moment shows that moment at once (without JS: press "Show").
document.addEventListener("change", (event) => {
  const input = event.target;
  if (input instanceof HTMLInputElement && input.hasAttribute("data-autosubmit") && input.form) {
    input.form.requestSubmit();
  }
});
