// A projection's tables, whatever the projection: their rows a page at a time
// (GET /projections/NAME/tables/TABLE), each key and value as text and its size. Rows are stored
// in a binary form the console does not know, so the text shows their strings.
import { api, attempt, element } from './api.js';

/** Rows a page. */
const pageSize = 50;

export class TablesView {
  constructor() {
    this.select = document.getElementById('table-name');
    this.next = document.getElementById('table-next');
    this.count = document.getElementById('table-count');
    this.body = document.querySelector('#table-rows tbody');
    this.projection = null;
    this.cursor = null;
    document.getElementById('table-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.load(null);
    });
    this.next.addEventListener('click', () => this.load(this.cursor));
    // Another table starts from its first page: the cursor was the other table's.
    this.select.addEventListener('change', () => this.clear());
  }

  /** Forgets the page shown and its cursor. */
  clear() {
    this.body.replaceChildren();
    this.count.textContent = '';
    this.cursor = null;
    this.next.disabled = true;
  }

  /** Lists the tables of a projection's `about` (`Show rows` shows the chosen one's first page). */
  show(about) {
    this.projection = about.name;
    this.select.replaceChildren(...about.tables.map((table) => element('option', { value: table.name, textContent: table.name })));
    this.select.dataset.projection = about.name;
    this.clear();
  }

  /** Shows the page of the chosen table after `after` (the first page when null). */
  async load(after) {
    const projection = this.projection;
    const table = this.select.value;
    if (!projection || !table) return;
    const search = new URLSearchParams({ limit: String(pageSize) });
    if (after) search.set('after', after);
    const page = await attempt('table-error', () =>
      api('GET', `/projections/${encodeURIComponent(projection)}/tables/${encodeURIComponent(table)}?${search}`));
    if (!page || projection !== this.projection || table !== this.select.value) return;
    const rows = page.rows.map((row) => element('tr', {},
      element('td', { className: 'mono', title: row.key, textContent: row.keyText }),
      element('td', { className: 'mono', title: row.value, textContent: row.valueText }),
      element('td', { className: 'numeric', textContent: String(row.bytes) })));
    if (!rows.length) rows.push(element('tr', {}, element('td', { className: 'muted', colSpan: 3, textContent: 'No rows.' })));
    this.body.replaceChildren(...rows);
    this.cursor = page.next;
    this.next.disabled = page.next === null;
    this.count.textContent = after ? 'a later page' : 'the first page';
  }
}
