/** Small DOM helpers for the dashboards (text only: nothing from a message is ever parsed as HTML). */

/** Creates an element with a class and text content. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A section with a heading. */
export function section(title: string, id?: string): HTMLElement {
  const s = el('section', 'card');
  if (id) s.id = id;
  s.appendChild(el('h2', undefined, title));
  return s;
}

/**
 * A data table: a header row and body rows of cells. Cells may carry raw numbers as data attributes, so tests and
 * screen readers read exact figures while the text shows rounded ones.
 */
export function table(id: string, caption: string, head: readonly string[], rows: readonly (readonly (string | { text: string; data?: Record<string, string> })[])[], rowData?: readonly Record<string, string>[]): HTMLElement {
  const details = el('details', 'data');
  details.appendChild(el('summary', undefined, caption));
  const t = el('table');
  t.id = id;
  const thead = el('thead');
  const hr = el('tr');
  for (const h of head) { const th = el('th', undefined, h); th.scope = 'col'; hr.appendChild(th); }
  thead.appendChild(hr);
  const tbody = el('tbody');
  rows.forEach((r, i) => {
    const tr = el('tr');
    for (const [k, v] of Object.entries(rowData?.[i] ?? {})) tr.dataset[k] = v;
    r.forEach((c, j) => {
      const cell = j === 0 ? el('th') : el('td');
      if (j === 0) (cell as HTMLTableCellElement).scope = 'row';
      if (typeof c === 'string') cell.textContent = c;
      else { cell.textContent = c.text; for (const [k, v] of Object.entries(c.data ?? {})) cell.dataset[k] = v; }
      tr.appendChild(cell);
    });
    tbody.appendChild(tr);
  });
  t.append(thead, tbody);
  details.appendChild(t);
  return details;
}
