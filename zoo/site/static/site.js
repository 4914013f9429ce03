// zoo catalogue: sortable tables, the home page's filter and search, copy buttons. Plain JS, no network.
"use strict";

function cellKey(row, index) {
  const cell = row.cells[index];
  if (!cell) return "";
  return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
}

// Numbers sort as numbers (empty cells last), anything else as text.
function compareKeys(a, b) {
  const na = a === "" ? NaN : Number(a), nb = b === "" ? NaN : Number(b);
  if (!isNaN(na) || !isNaN(nb)) {
    if (isNaN(na)) return 1;
    if (isNaN(nb)) return -1;
    return na - nb;
  }
  return a.localeCompare(b);
}

function sortTable(table, th) {
  const index = Array.prototype.indexOf.call(th.parentNode.cells, th);
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("thead th").forEach(h => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  rows.sort((r1, r2) => {
    const k1 = cellKey(r1, index), k2 = cellKey(r2, index);
    if (k1 === "" && k2 !== "") return 1;  // empty cells stay last in both directions
    if (k2 === "" && k1 !== "") return -1;
    const c = compareKeys(k1, k2);
    return ascending ? c : -c;
  });
  rows.forEach(r => body.appendChild(r));
}

function applyFilters() {
  const family = document.getElementById("f-family").value;
  const task = document.getElementById("f-task").value;
  const status = document.getElementById("f-status").value;
  const words = document.getElementById("f-search").value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  document.querySelectorAll("#paper-list tbody tr").forEach(row => {
    const ok = (!family || row.dataset.family === family)
      && (!status || row.dataset.status === status)
      && (!task || row.dataset.tasks.split(" ").includes(task))
      && words.every(w => row.dataset.text.includes(w));
    row.hidden = !ok;
    if (ok) shown += 1;
  });
  document.getElementById("shown-count").textContent = String(shown);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach(table => {
    table.querySelectorAll("thead th").forEach(th => th.addEventListener("click", () => sortTable(table, th)));
  });
  if (document.getElementById("filters")) {
    ["f-family", "f-task", "f-status"].forEach(id => document.getElementById(id).addEventListener("change", applyFilters));
    document.getElementById("f-search").addEventListener("input", applyFilters);
    applyFilters();  // a browser may restore the form's values on back/forward
  }
  document.querySelectorAll("button.copy").forEach(button => button.addEventListener("click", () => {
    const text = document.getElementById(button.dataset.copy).textContent;
    // the Clipboard API needs a secure context (not file://): fall back to selecting the text for Ctrl+C
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => { button.textContent = "copied"; }, () => {});
    } else {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = "selected: Ctrl+C";
    }
  }));
});
