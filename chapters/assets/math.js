// Renders the math that pymdownx.arithmatex marks (class "arithmatex") with the KaTeX copied into the site.
function renderCourseMath() {
  document.querySelectorAll(".arithmatex").forEach(function (el) {
    renderMathInElement(el, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  });
}
if (typeof document$ !== "undefined") {
  document$.subscribe(renderCourseMath);  // Material's page-load stream
} else {
  document.addEventListener("DOMContentLoaded", renderCourseMath);
}
