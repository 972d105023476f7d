// The board viewer of the arbitration report: draws any step's frame on the page's one sheet, with
// the same symbols and mark styles as the boards drawn in Python (replay/picture.py).
(() => {
  const D = JSON.parse(document.getElementById("frames").textContent);
  const svg = document.getElementById("viewer");
  const range = document.getElementById("step");
  const label = document.getElementById("steplabel");
  const rows = Array.from(document.querySelectorAll("#timeline tr[data-i]"));
  const bySeq = new Map(D.steps.map(([seq], i) => [seq, i]));
  const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  // as replay/picture.py's _attrs: a ring carries no arrowhead, a line no fill
  const attrs = (kind, ring) => Object.entries(D.styles[kind])
    .filter(([name]) => !(ring && name === "marker-end") && !(!ring && name === "fill-opacity"))
    .map(([name, v]) => `${name}="${name === "fill" && !ring ? "none" : v}"`).join(" ");

  function mark([kind, path]) {
    const pts = path.map((i) => D.slots[i]);
    const ends = pts.length > 1 ? [pts[0], pts[pts.length - 1]] : pts;
    let out = ends.map(([x, y]) => `<circle cx="${x}" cy="${y}" r="${D.ring}" ${attrs(kind, true)}/>`).join("");
    if (pts.length > 1) out += `<polyline points="${pts.map((p) => p.join(",")).join(" ")}" ${attrs(kind, false)}/>`;
    return `<g class="mark mark-${kind}">${out}</g>`;
  }

  function draw(f) {
    const [cells, marks, texts, caption] = D.frames[f];
    let uses = "";
    for (let i = 0; i < cells.length; i++) {
      if (cells[i] !== ".") uses += `<use href="#${D.name}-${cells[i]}" x="${D.slots[i][0]}" y="${D.slots[i][1]}"/>`;
    }
    svg.querySelector(".cells").innerHTML = uses;
    svg.querySelector(".marks").innerHTML = marks.map(mark).join("");
    svg.querySelector(".texts").innerHTML = texts.map(([x, y, t]) => `<text x="${x}" y="${y}" font-size="11" fill="#fff">${esc(t)}</text>`).join("");
    // two lines, split as replay/picture.py's caption_lines: up to the first clause break, then the rest
    const at = [caption.indexOf("；"), caption.indexOf("; ")].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b), Infinity);
    const lines = at === Infinity ? [caption, ""] : [caption.slice(0, at + 1), caption.slice(at + 1).trimStart()];
    svg.querySelector(".caption").innerHTML = lines.map((l, n) => `<tspan x="10" dy="${n * 18}">${esc(l)}</tspan>`).join("");
    svg.setAttribute("aria-label", caption);
  }

  const printed = document.getElementById("printstep");

  function select(i, reveal, remember) {
    i = Math.max(0, Math.min(D.steps.length - 1, i));
    const [seq, f] = D.steps[i];
    range.value = String(i);
    draw(f);
    label.textContent = `seq ${seq} · ${rows[i] ? rows[i].dataset.kind : ""}`;
    if (printed) printed.textContent = `棋盘为 seq ${seq} 之后的局面 the board after seq ${seq} (${rows[i] ? rows[i].dataset.kind : ""})`;
    if (remember) history.replaceState(null, "", `#s${seq}`); // the step goes into the URL: a link shows this board
    rows.forEach((r) => r.classList.remove("on"));
    if (rows[i]) {
      rows[i].classList.add("on");
      const box = rows[i].closest(".scroll");
      if (box) box.scrollTop = rows[i].offsetTop - box.clientHeight / 2;
    }
    if (reveal) svg.scrollIntoView({ block: "start" });
  }

  function fromHash() {
    const m = /^#s(\d+)$/.exec(location.hash);
    if (m && bySeq.has(Number(m[1]))) select(bySeq.get(Number(m[1])), true, false);
  }

  // A move and its game.move_time claim are one step for ◀/▶: the claim changes no board.
  const isClaim = (i) => rows[i] && rows[i].dataset.kind === "game.move_time";
  function step(by) {
    let i = Number(range.value) + by;
    while (i > 0 && i < D.steps.length - 1 && isClaim(i)) i += by;
    select(i, false, true);
  }

  range.max = String(D.steps.length - 1);
  range.addEventListener("input", () => select(Number(range.value), false, true));
  document.getElementById("prev").addEventListener("click", () => step(-1));
  document.getElementById("next").addEventListener("click", () => step(1));
  rows.forEach((r) => r.addEventListener("click", () => select(Number(r.dataset.i), false, true)));
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("keydown", (ev) => {
    if (ev.target === range) return;
    if (ev.key === "ArrowLeft") step(-1);
    if (ev.key === "ArrowRight") step(1);
    if (ev.key === "Home") select(0, false, true);
    if (ev.key === "End") select(D.steps.length - 1, false, true);
  });
  select(D.steps.length - 1, false, false);
  fromHash();
  // a link to a step opens the page there: after the browser's own jump to the row, show the board
  window.addEventListener("load", () => setTimeout(fromHash, 0));
})();
